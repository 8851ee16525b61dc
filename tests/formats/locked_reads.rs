//! Locked reads and connection order (issue 32 item 4) through the native JSON format: laid
//! out by the builder, written and read back exactly, their loss reported by conversions to
//! other formats, bad ones refused with the line.

use isopredict::history::{History, HistoryBuilder, ReadFrom};

/// Two sessions interleaved (so the builder relays operations out), each incrementing `x`
/// atomically; session 3 opens after both closed.
fn locked_increments() -> (History, [usize; 2]) {
    let mut b = HistoryBuilder::new("locks");
    let x = b.key("x");
    let y = b.key("y");
    let s1 = b.session(None);
    let s2 = b.session(None);
    let s3 = b.session(None);
    let t1 = b.begin(s1, None);
    let t2 = b.begin(s2, None);
    b.read(t2, y, None, ReadFrom::Initial, 1);
    let r1 = b.op_count();
    b.lock_read(r1);
    b.read(t1, x, None, ReadFrom::Initial, 2);
    b.write(t1, x, Some(1), 3);
    let r2 = b.op_count();
    b.lock_read(r2);
    b.read(t2, x, Some(1), ReadFrom::Value(1), 4);
    b.write(t2, x, Some(2), 5);
    b.lock_read(r2);
    let t3 = b.begin(s3, None);
    b.read(t3, x, Some(2), ReadFrom::Value(2), 6);
    b.session_after(s3, s1);
    b.session_after(s3, s2);
    b.session_after(s3, s1);
    (b.build().unwrap(), [r1, r2])
}

#[test]
fn locked_reads_and_session_order_facts_are_laid_out() {
    let (h, _) = locked_increments();
    let t1 = h.txn(1).ops().start;
    let t2 = h.txn(2).ops().start;
    // t1 = [r x, w x]; t2 = [r y, r x, w x].
    assert_eq!(h.locked_reads(), &[t1, t2 + 1]);
    assert!(h.is_locked_read(t1));
    assert!(!h.is_locked_read(t2));
    assert_eq!(h.sessions_after(), &[(0, 2), (1, 2)]);
    // JSON carries both exactly; other formats report the loss.
    let mut out = Vec::new();
    isopredict::formats::json::write(&h, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("\"locked\": true"), "{text}");
    assert!(text.contains("\"after\": [0, 1]"), "{text}");
    let back = isopredict::formats::json::read(text.as_bytes(), "j").unwrap();
    assert_eq!(back.locked_reads(), h.locked_reads());
    assert_eq!(back.sessions_after(), h.sessions_after());
    back.same_content(&h).unwrap();
    let losses =
        isopredict::formats::conversion_losses(&h, isopredict::formats::Format::IsoPredict)
            .join("\n");
    assert!(losses.contains("2 read(s)"), "{losses}");
    assert!(losses.contains("2 fact(s)"), "{losses}");
}

#[test]
fn bad_json_locks_and_session_orders_name_the_line() {
    let doc = |session: &str, op: &str| {
        format!(
            "{{\"format\": \"isopredict-history\", \"version\": 1, \"keys\": [\"x\"],\n\
             \"sessions\": [\n{session}\n{{\"transactions\": [{{\"ops\": [\n{op}\n]}}]}}]}}"
        )
    };
    let read = |t: String| {
        isopredict::formats::json::read(t.as_bytes(), "j")
            .unwrap_err()
            .to_string()
    };
    let e = read(doc(
        "{\"after\": [2], \"transactions\": []},",
        "{\"r\": \"x\", \"from\": \"initial\"}",
    ));
    assert!(
        e.contains("j:3") && e.contains("\"after\" names session 2"),
        "{e}"
    );
    let e = read(doc(
        "{\"transactions\": []},",
        "{\"w\": \"x\", \"locked\": true}",
    ));
    assert!(e.contains("j:5") && e.contains("not a write"), "{e}");
    let e = read(doc(
        "{\"transactions\": []},",
        "{\"r\": \"x\", \"from\": \"initial\", \"locked\": true}",
    ));
    assert!(e.contains("j:5") && e.contains("does not write"), "{e}");
    let e = read(doc(
        "{\"after\": [0], \"transactions\": []},",
        "{\"r\": \"x\", \"from\": \"initial\"}",
    ));
    assert!(e.contains("after itself"), "{e}");
}
