//! Voter (VoltDB's voting benchmark, as ported to OLTP-Bench and MonkeyDB, run by IsoPredict
//! PLDI'24 §7; notes/workloads.md §3).
//!
//! Schema: CONTESTANTS(contestant_number PK, contestant_name), AREA_CODE_STATE(area_code PK,
//! state), VOTES(vote_id, phone_number, state, contestant_number, created) without a key (row
//! ids from the store's counter). Initial data: contestant 1 "Edwina Burnam", the 305 area
//! codes with their states, no votes. One procedure, Vote; IsoPredict neutralised the phone
//! generator: every call votes from 2050000001 (area 205, AL) for contestant 1 with at most 1
//! vote per phone, so in a serial run exactly one Vote inserts and the others find the limit
//! reached. Vote ids count per terminal from 0 (they collide across terminals, harmlessly).
//!
//! Invariant A14: no phone number has more than 1 vote.

use crate::store::{Loader, Outcome, Pred, Projection, Snapshot, Table, Tx, Value};

use super::{InvariantCheck, Procedure, Step, Terminal, Workload};

/// Votes allowed per phone number.
pub const MAX_VOTES: usize = 1;
/// The phone number every call uses.
pub const PHONE: i64 = 2_050_000_001;
/// The contestant every call votes for.
pub const CONTESTANT: i64 = 1;

const PROCEDURES: &[Procedure] = &[Procedure {
    name: "Vote",
    weight: 100,
}];

/// The North American area codes of the benchmark, in load order.
const AREA_CODES: &str = "907,205,256,334,251,870,501,479,480,602,623,928,520,341,764,628,831,925,909,562,661,510,650,949,760,415,951,209,669,408,559,626,442,530,916,627,714,707,310,323,213,424,747,818,858,935,619,805,369,720,303,970,719,860,203,959,475,202,302,689,407,239,850,727,321,754,954,927,352,863,386,904,561,772,786,305,941,813,478,770,470,404,762,706,678,912,229,808,515,319,563,641,712,208,217,872,312,773,464,708,224,847,779,815,618,309,331,630,317,765,574,260,219,812,913,785,316,620,606,859,502,270,504,985,225,318,337,774,508,339,781,857,617,978,351,413,443,410,301,240,207,517,810,278,679,313,586,947,248,734,269,989,906,616,231,612,320,651,763,952,218,507,636,660,975,816,573,314,557,417,769,601,662,228,406,336,252,984,919,980,910,828,704,701,402,308,603,908,848,732,551,201,862,973,609,856,575,957,505,775,702,315,518,646,347,212,718,516,917,845,631,716,585,607,914,216,330,234,567,419,440,380,740,614,283,513,937,918,580,405,503,541,971,814,717,570,878,835,484,610,267,215,724,412,401,843,864,803,605,423,865,931,615,901,731,254,325,713,940,817,430,903,806,737,512,361,210,979,936,409,972,469,214,682,832,281,830,956,432,915,435,801,385,434,804,757,703,571,276,236,540,802,509,360,564,206,425,253,715,920,262,414,608,304,307";

/// Their states, in the same order.
const STATES: &str = "AK,AL,AL,AL,AL,AR,AR,AR,AZ,AZ,AZ,AZ,AZ,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CA,CO,CO,CO,CO,CT,CT,CT,CT,DC,DE,FL,FL,FL,FL,FL,FL,FL,FL,FL,FL,FL,FL,FL,FL,FL,FL,FL,FL,FL,GA,GA,GA,GA,GA,GA,GA,GA,GA,HI,IA,IA,IA,IA,IA,ID,IL,IL,IL,IL,IL,IL,IL,IL,IL,IL,IL,IL,IL,IL,IN,IN,IN,IN,IN,IN,KS,KS,KS,KS,KY,KY,KY,KY,LA,LA,LA,LA,LA,MA,MA,MA,MA,MA,MA,MA,MA,MA,MD,MD,MD,MD,ME,MI,MI,MI,MI,MI,MI,MI,MI,MI,MI,MI,MI,MI,MI,MN,MN,MN,MN,MN,MN,MN,MO,MO,MO,MO,MO,MO,MO,MO,MS,MS,MS,MS,MT,NC,NC,NC,NC,NC,NC,NC,NC,ND,NE,NE,NH,NJ,NJ,NJ,NJ,NJ,NJ,NJ,NJ,NJ,NM,NM,NM,NV,NV,NY,NY,NY,NY,NY,NY,NY,NY,NY,NY,NY,NY,NY,NY,OH,OH,OH,OH,OH,OH,OH,OH,OH,OH,OH,OH,OK,OK,OK,OR,OR,OR,PA,PA,PA,PA,PA,PA,PA,PA,PA,PA,PA,RI,SC,SC,SC,SD,TN,TN,TN,TN,TN,TN,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,TX,UT,UT,UT,VA,VA,VA,VA,VA,VA,VA,VA,VT,WA,WA,WA,WA,WA,WA,WI,WI,WI,WI,WI,WV,WY";

struct Tables {
    contestants: Table,
    area_code_state: Table,
    votes: Table,
}

fn tables() -> Tables {
    Tables {
        contestants: Table::new(
            "CONTESTANTS",
            &["contestant_number", "contestant_name"],
            Some(&["contestant_number"]),
        ),
        area_code_state: Table::new(
            "AREA_CODE_STATE",
            &["area_code", "state"],
            Some(&["area_code"]),
        ),
        votes: Table::new(
            "VOTES",
            &[
                "vote_id",
                "phone_number",
                "state",
                "contestant_number",
                "created",
            ],
            None,
        ),
    }
}

/// The Voter workload.
#[derive(Debug, Clone, Copy, Default)]
pub struct Voter;

impl Workload for Voter {
    fn name(&self) -> &'static str {
        "voter"
    }

    fn procedures(&self) -> &'static [Procedure] {
        PROCEDURES
    }

    fn first_session(&self) -> u64 {
        8
    }

    fn load(&self, loader: &mut Loader<'_>) {
        let t = tables();
        t.contestants.create(loader);
        t.area_code_state.create(loader);
        t.votes.create(loader);
        t.contestants.insert(
            loader,
            &[
                ("contestant_number", Value::Int(CONTESTANT)),
                ("contestant_name", Value::text("Edwina Burnam")),
            ],
        );
        for (code, state) in AREA_CODES.split(',').zip(STATES.split(',')) {
            let code: i64 = code.parse().expect("area codes are numbers");
            t.area_code_state.insert(
                loader,
                &[
                    ("area_code", Value::Int(code)),
                    ("state", Value::text(state)),
                ],
            );
        }
    }

    fn terminal(&self, _id: usize) -> Box<dyn Terminal> {
        Box::new(VoterTerminal {
            tables: tables(),
            next_vote_id: 0,
        })
    }

    fn tables(&self) -> Vec<Table> {
        let t = tables();
        vec![t.contestants, t.area_code_state, t.votes]
    }

    fn invariants(&self, state: &mut Snapshot<'_>) -> Vec<InvariantCheck> {
        let t = tables();
        let phones = t
            .votes
            .select(state, Projection::Columns(&["phone_number"]), &Pred::All);
        let mut counts: Vec<(String, usize)> = Vec::new();
        for row in phones {
            let phone = row[0].to_string();
            match counts.iter_mut().find(|(p, _)| *p == phone) {
                Some(c) => c.1 += 1,
                None => counts.push((phone, 1)),
            }
        }
        let over: Vec<String> = counts
            .iter()
            .filter(|(_, n)| *n > MAX_VOTES)
            .map(|(p, n)| format!("phone {p} has {n} votes"))
            .collect();
        vec![InvariantCheck {
            id: "A14",
            description: "no phone number has more votes than allowed (1)",
            holds: over.is_empty(),
            detail: over.join("; "),
        }]
    }
}

struct VoterTerminal {
    tables: Tables,
    next_vote_id: i64,
}

impl Terminal for VoterTerminal {
    fn run(&mut self, _procedure: usize, _step: u32, tx: &mut Tx<'_>) -> Step {
        let t = &self.tables;
        let vote_id = self.next_vote_id;
        self.next_vote_id += 1;
        // 1. The contestant must exist (else return code 1, committing).
        let found = t.contestants.select(
            tx,
            Projection::Columns(&["contestant_number"]),
            &Pred::eq("contestant_number", CONTESTANT),
        );
        if found.is_empty() {
            return Step::Done(Outcome::Commit);
        }
        // 2. At most MAX_VOTES votes per phone (else return code 2, committing).
        let votes = t
            .votes
            .select(tx, Projection::All, &Pred::eq("phone_number", PHONE));
        if !votes.is_empty() && votes.len() >= MAX_VOTES {
            return Step::Done(Outcome::Commit);
        }
        // 3. The caller's state from the area code.
        let state = t
            .area_code_state
            .select(
                tx,
                Projection::Columns(&["state"]),
                &Pred::eq("area_code", PHONE / 10_000_000),
            )
            .first()
            .map_or(Value::text("XX"), |r| r[0].clone());
        // 4. Record the vote.
        t.votes.insert(
            tx,
            &[
                ("vote_id", Value::Int(vote_id)),
                ("phone_number", Value::Int(PHONE)),
                ("state", state),
                ("contestant_number", Value::Int(CONTESTANT)),
                ("created", Value::text("1970-01-01 00:00:00")),
            ],
        );
        Step::Done(Outcome::Commit)
    }

    fn parameters(&self) -> Option<String> {
        // The id of the call that just ran.
        Some(format!(
            "voteId={}, phoneNumber={PHONE}, contestantNumber={CONTESTANT}",
            self.next_vote_id - 1
        ))
    }
}
