import java.sql.*;
import java.util.*;

/** A bank over JDBC: accounts, batched inserts, generated keys, and a deposit that reads a
 *  balance and writes back the sum computed here (a lost update at read committed). */
public class Bank {
    static Connection connect(String name) throws SQLException {
        String url = "jdbc:postgresql://" + System.getenv("PGHOST") + ":" + System.getenv("PGPORT")
            + "/" + System.getenv("PGDATABASE") + "?ApplicationName=" + name;
        return DriverManager.getConnection(url, System.getenv("PGUSER"), System.getenv().getOrDefault("PGPASSWORD", ""));
    }

    static void deposit(Connection c, int id, int amount) throws SQLException {
        c.setAutoCommit(false);
        int bal;
        try (PreparedStatement read = c.prepareStatement("SELECT bal FROM acct WHERE id = ?")) {
            read.setInt(1, id);
            try (ResultSet rs = read.executeQuery()) { rs.next(); bal = rs.getInt(1); }
        }
        try (PreparedStatement write = c.prepareStatement("UPDATE acct SET bal = ? WHERE id = ?")) {
            write.setInt(1, bal + amount);
            write.setInt(2, id);
            write.executeUpdate();
        }
        try (PreparedStatement log = c.prepareStatement("INSERT INTO audit (acct, amount) VALUES (?, ?)",
                Statement.RETURN_GENERATED_KEYS)) {
            log.setInt(1, id);
            log.setLong(2, amount);
            log.executeUpdate();
            try (ResultSet keys = log.getGeneratedKeys()) { keys.next(); keys.getLong(1); }
        }
        c.commit();
    }

    public static void main(String[] args) throws Exception {
        try (Connection c = connect("setup"); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE acct (id integer PRIMARY KEY, owner varchar(20) NOT NULL, bal bigint NOT NULL)");
            s.execute("CREATE TABLE audit (n bigserial PRIMARY KEY, acct integer NOT NULL, amount bigint NOT NULL)");
            c.setAutoCommit(false);
            try (PreparedStatement ins = c.prepareStatement("INSERT INTO acct VALUES (?, ?, ?)")) {
                for (int i = 1; i <= 3; i++) {
                    ins.setInt(1, i); ins.setString(2, "owner" + i); ins.setLong(3, 100);
                    ins.addBatch();
                }
                ins.executeBatch();
            }
            c.commit();
        }
        List<Thread> threads = new ArrayList<>();
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < 2; t++) {
            final int who = t;
            Thread th = new Thread(() -> {
                try (Connection c = connect("teller" + who)) {
                    for (int k = 0; k < 8; k++) deposit(c, 1 + (k % 2), 10);
                } catch (Throwable e) { errors.add(e); }
            });
            threads.add(th); th.start();
        }
        for (Thread th : threads) th.join();
        if (!errors.isEmpty()) { errors.get(0).printStackTrace(); System.exit(1); }
        try (Connection c = connect("report"); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, owner, bal FROM acct ORDER BY id")) {
            while (rs.next()) System.out.println(rs.getInt(1) + "|" + rs.getString(2) + "|" + rs.getLong(3));
        }
        try (Connection c = connect("report2"); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*), sum(amount) FROM audit")) {
            rs.next(); System.out.println("audit|" + rs.getLong(1) + "|" + rs.getLong(2));
        }
    }
}
