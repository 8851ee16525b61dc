//! Round trips: read → write → read gives the same history, for every format, on random
//! histories (proptest; `PROPTEST_CASES` sets the count) and on the shipped test data.

use crate::common;

use common::{assert_identical, build, spec, write_string, Domain};
use isopredict::formats::{self, conversion_notes, Format, FormatError};
use proptest::prelude::*;

fn read(text: &str, format: Format) -> isopredict::History {
    formats::read_str(text, "written", Some(format))
        .unwrap_or_else(|e| panic!("reading back {format} failed: {e}\n{text}"))
}

/// Writes `h` in `format`, reads it back, checks the content is the same and that a second
/// write gives the same text.
fn round_trip(h: &isopredict::History, format: Format) {
    let notes = conversion_notes(h, format);
    assert!(notes.is_empty(), "{format}: unexpected notes {notes:?}");
    let text = write_string(h, format).unwrap_or_else(|e| panic!("{format}: {e}"));
    let g = read(&text, format);
    if let Err(diff) = h.same_content(&g) {
        panic!("{format}: {diff}\n{text}");
    }
    assert_eq!(
        write_string(&g, format).unwrap(),
        text,
        "{format}: a second write differs"
    );
    // Detection recognises what the writer produced (when there is anything to see).
    if g.ops().len() > g.implicit_initial_writes() as usize {
        assert_eq!(formats::detect(&text), Some(format));
    }
}

proptest! {
    #[test]
    fn json_round_trip_is_exact(s in spec()) {
        let h = build(&s, Domain::Json);
        let text = write_string(&h, Format::Json).unwrap();
        let g = read(&text, Format::Json);
        assert_identical(&h, &g);
        prop_assert_eq!(write_string(&g, Format::Json).unwrap(), text);
    }

    #[test]
    fn isopredict_round_trip(s in spec()) {
        round_trip(&build(&s, Domain::IsoPredict), Format::IsoPredict);
    }

    #[test]
    fn plume_round_trip(s in spec()) {
        round_trip(&build(&s, Domain::Plume), Format::Plume);
    }

    #[test]
    fn awdit_round_trip(s in spec()) {
        round_trip(&build(&s, Domain::Awdit), Format::Awdit);
    }

    /// Any history converts to any format, or is refused as unrepresentable; what is written
    /// always reads back, and without notes it reads back as the same history.
    #[test]
    fn any_history_converts_or_is_refused(s in spec()) {
        let h = build(&s, Domain::Json);
        for format in Format::ALL {
            match formats::write_parts(&h, format) {
                Ok(parts) => {
                    let g = formats::read_parts(&parts, format, "written")
                        .unwrap_or_else(|e| panic!("reading back {format} failed: {e}"));
                    if conversion_notes(&h, format).is_empty() {
                        if let Err(diff) = h.same_content(&g) {
                            panic!("{format}: {diff}\n{parts:?}");
                        }
                    }
                }
                Err(FormatError::Unrepresentable { .. }) => {}
                Err(e) => panic!("{format}: {e}"),
            }
        }
    }
}

/// Every shipped file round-trips through its own format and through JSON exactly.
#[test]
fn shipped_test_data_round_trips() {
    let files = common::labelled_and_traces();
    assert_eq!(files.len(), 38);
    for path in files {
        let h = formats::read_file(&path, None).unwrap();
        let own = if path.to_string_lossy().contains("isopredict-traces") {
            Format::IsoPredict
        } else {
            Format::Awdit
        };
        round_trip(&h, own);
        let json = write_string(&h, Format::Json).unwrap();
        assert_identical(&h, &read(&json, Format::Json));
        // Plume can carry these too (with made-up values and key numbers for the traces).
        let plume = write_string(&h, Format::Plume).unwrap();
        let g = read(&plume, Format::Plume);
        assert_eq!(h.stats().reads, g.stats().reads, "{}", path.display());
    }
}

/// An IsoPredict trace written back keeps the trace's own order of transactions.
#[test]
fn traces_write_back_verbatim() {
    let files = common::txt_files(&common::testdata_dir().join("isopredict-traces"));
    assert_eq!(files.len(), 16);
    for path in files {
        let original = std::fs::read_to_string(&path).unwrap();
        let h = formats::read_str(&original, "t", None).unwrap();
        let written = write_string(&h, Format::IsoPredict).unwrap();
        // The artifact treats DELETE as a write of the set element, as we do; we write INSERT.
        let expected: String = original
            .lines()
            .map(|l| match l.strip_prefix("DELETE[") {
                Some(rest) => format!("INSERT[{}\n", rest.replacen("] from Set[", "] to Set[", 1)),
                None => format!("{l}\n"),
            })
            .collect();
        assert!(written == expected, "{} differs", path.display());
    }
}
