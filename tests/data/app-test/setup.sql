DROP TABLE IF EXISTS acct;
CREATE TABLE acct (id integer PRIMARY KEY, bal integer NOT NULL, declined boolean NOT NULL);
INSERT INTO acct VALUES (1, 100, false);
