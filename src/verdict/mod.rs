//! The one decision core: the only way any command judges a history at an isolation level
//! (docs/architecture.md, "Semantics we commit to": one verdict).
//!
//! [`decide`] answers "is this history valid at level L, on this evidence?" and
//! [`decide_all`] asks it for every level. Both go through one [`Decider`], which runs the
//! checkers — AWDIT's rc/ra/cc and Plume's ci ([`crate::check`]), the commit-order search for
//! pc/si/ser ([`crate::ser::check_strong`]), the timestamp checker ([`crate::ser::chronos`])
//! — and returns a [`Verdict`] that says which level, consistent / violated / unknown (with
//! the limit that stopped it), which evidence it relied on ([`Evidence`]) and, for a
//! violation, the anomaly's name and the report that shows it.
//!
//! **The levels imply each other by construction**: strict-ser ⇒ ser ⇒ si ⇒ pc ⇒ cc ⇒ ra ⇒
//! rc, and ra ⇒ ci. A level is only called consistent on a proof that also holds for every
//! weaker level (a serial order, a commit order, the timestamps' own orders), and is called
//! violated when a weaker level is. Where a check's proof does not cover the weaker level —
//! the timestamp checker's ser (commit-timestamp order) says nothing of the snapshots, which
//! si judges by the start timestamps — the weaker level is decided first and a violation
//! there is the stronger level's verdict too. [`decide_all`] saves work with the same
//! implications (a consistent ser makes si and pc consistent without a search) and checks
//! that no answer breaks the chain.

mod elle_output;
pub mod engines;
mod evidence;
mod input;
mod render;
mod witness;

pub use elle_output::{elle_result, is_list_append, ElleResult, ElleValid, ElleValue};
pub use evidence::{Evidence, EvidenceChoice, EvidenceUnavailable, EvidenceUse};
pub use input::{read_input, Input, ReadOptions};
pub use render::{evidence_line, one_json, render_one, VerdictsReport};
pub use witness::{is_witness_order, witness_commit_order, WitnessOrder};

pub use crate::history::anomalies::AnomalyNames;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::check::{
    self, CheckError, CheckOptions, CheckReport, CycleReport, Level, ReadViolation,
};
use crate::error::InputError;
use crate::history::anomalies::{self, AnomalyId};
use crate::history::History;
use crate::ser::{
    self, check_timestamps, Engine, StrongLevel, StrongOptions, StrongReport, TimestampReport,
    TsCheckOptions, TsLevel,
};

/// Consistent, violated or unknown (the engines' answer type, shared).
pub use crate::ser::Verdict as Outcome;

/// The limits and options of a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Give up (unknown) after this long, over all levels decided by one [`Decider`].
    pub timeout: Option<Duration>,
    /// The engine of the pc/si/ser search.
    pub engine: Engine,
    /// Describe at most this many violations per report (counts stay exact).
    pub max_violations: usize,
    /// On a pass, include a witness commit order in the report.
    pub witness: bool,
    /// On a pc/si/ser violation, shrink it to a minimal core and name it (bounded in time).
    pub explain: bool,
    /// Show at most this many edges of each rc/ra/cc/ci cycle (the report says how many more).
    pub max_cycle_edges: Option<usize>,
    /// Most time spent shrinking a pc/si/ser violation to its minimal core (`None`: the
    /// search's default, 10 s).
    pub explain_timeout: Option<Duration>,
    /// Memory budget in bytes for the checkers' largest structures (the causal check's
    /// clocks, the strong levels' saturation); over it the verdict is unknown, naming it.
    /// `None`: no budget beyond the causal check's built-in bound.
    pub memory: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: None,
            engine: Engine::Auto,
            max_violations: 1000,
            witness: false,
            explain: true,
            max_cycle_edges: None,
            explain_timeout: None,
            memory: None,
        }
    }
}

/// The report of the check behind a verdict.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum LevelReport {
    /// rc, ra, cc, ci: AWDIT's and Plume's checkers.
    Weak(CheckReport),
    /// pc, si, ser, strict-ser: the commit-order search.
    Strong(Box<StrongReport>),
    /// si, ser on the database's timestamps.
    Timestamps(TimestampReport),
}

impl LevelReport {
    /// The report in words.
    pub fn render_text(&self) -> String {
        match self {
            LevelReport::Weak(r) => r.render_text(),
            LevelReport::Strong(r) => r.render_text(),
            LevelReport::Timestamps(r) => format!(
                "{r}(the timestamp checker takes the database's timestamps as the commit \
                 order and snapshots; --evidence black-box asks instead whether any commit \
                 order exists)\n"
            ),
        }
    }

    /// The violations as a Graphviz DOT drawing (none for the timestamp checker, whose
    /// report names every violation).
    pub fn render_dot(&self) -> Option<String> {
        match self {
            LevelReport::Weak(r) => r.render_dot(),
            LevelReport::Strong(r) => r.render_dot(),
            LevelReport::Timestamps(_) => None,
        }
    }
}

/// One level's verdict.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Verdict {
    /// The level.
    pub level: Level,
    /// Consistent, violated or unknown.
    pub verdict: Outcome,
    /// What the verdict relied on.
    pub evidence: Evidence,
    /// When decided by another level's verdict (a consistent stronger level, a violated
    /// weaker one): that level.
    pub implied_by: Option<Level>,
    /// For a violation: the anomaly's engineer's name, a row of the anomaly table
    /// (`history::anomalies`), whichever checker found it ([`anomaly_of`]).
    pub anomaly: Option<String>,
    /// For a violation: the anomaly's names in the other vocabularies (Adya, Elle, Plume,
    /// Chronos), from the same row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anomaly_names: Option<AnomalyNames>,
    /// For an unknown verdict: the limit that stopped it.
    pub unknown_reason: Option<String>,
    /// What another kind of evidence says, when it was asked and disagrees or adds to it.
    pub note: Option<String>,
    /// The report of the check behind the verdict (the implying level's, when implied).
    #[serde(skip)]
    pub report: Option<Arc<LevelReport>>,
}

impl Verdict {
    /// Whether the level holds.
    pub fn is_consistent(&self) -> bool {
        self.verdict == Outcome::Consistent
    }

    /// The verdict of `level` (on `evidence`) that this verdict decides: the same outcome,
    /// anomaly and report, implied by this level (or by the level that implied this one).
    fn implying(&self, level: Level, evidence: Evidence) -> Verdict {
        Verdict {
            level,
            verdict: self.verdict,
            evidence,
            implied_by: Some(self.implied_by.unwrap_or(self.level)),
            anomaly: self.anomaly.clone(),
            anomaly_names: self.anomaly_names.clone(),
            unknown_reason: None,
            note: None,
            report: self.report.clone(),
        }
    }

    /// The anomaly's row in the anomaly table.
    pub fn anomaly_id(&self) -> Option<AnomalyId> {
        self.anomaly_names.as_ref().map(|n| n.id)
    }

    /// The anomaly as every view prints it: the engineer's name with Adya's, Elle's and
    /// Plume's identifiers beside it (`AnomalyRow::label`).
    pub fn anomaly_label(&self) -> Option<String> {
        match self.anomaly_id() {
            Some(id) => Some(id.label()),
            None => self.anomaly.clone(),
        }
    }

    /// The verdict as one line: `ser serializability VIOLATED: write skew (Adya G2, Elle
    /// G2-item) [evidence: …]`.
    pub fn line(&self) -> String {
        let outcome = match self.verdict {
            Outcome::Consistent => "consistent",
            Outcome::Violated => "VIOLATED",
            Outcome::Unknown => "UNKNOWN",
        };
        let mut line = format!("{} ({}) {outcome}", self.level.full_name(), self.level);
        if let Some(a) = self.anomaly_label() {
            line.push_str(&format!(": {a}"));
        }
        if let Some(r) = &self.unknown_reason {
            line.push_str(&format!(": {r}"));
        }
        if let Some(by) = self.implied_by {
            line.push_str(&format!(" (implied by {by})"));
        }
        line.push_str(&format!(" [evidence: {}]", self.evidence));
        line
    }
}

/// Why no verdict could be given at all (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecideError {
    /// The input could not be turned into what the level needs.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The evidence asked for is not in the input.
    #[error(transparent)]
    Evidence(#[from] EvidenceUnavailable),
}

/// Decides one level (see the module documentation).
///
/// ```
/// use isopredict::check::Level;
/// use isopredict::history::{HistoryBuilder, ReadFrom};
/// use isopredict::verdict::{decide, EvidenceChoice, Input, Limits, Outcome};
///
/// // Write skew: t1 reads x and writes y, t2 reads y and writes x, both from the initial state.
/// let mut b = HistoryBuilder::new("skew");
/// let (x, y) = (b.key("x"), b.key("y"));
/// let (s1, s2) = (b.session(None), b.session(None));
/// let t1 = b.begin(s1, None);
/// b.read(t1, x, None, ReadFrom::Initial, 1);
/// b.write(t1, y, None, 2);
/// let t2 = b.begin(s2, None);
/// b.read(t2, y, None, ReadFrom::Initial, 3);
/// b.write(t2, x, None, 4);
/// let h = b.build().unwrap();
///
/// let input = Input::of(&h).unwrap();
/// let limits = Limits::default();
/// let si = decide(&input, Level::Snapshot, EvidenceChoice::Auto, &limits).unwrap();
/// assert_eq!(si.verdict, Outcome::Consistent);
/// let ser = decide(&input, Level::Serializable, EvidenceChoice::Auto, &limits).unwrap();
/// assert_eq!(ser.verdict, Outcome::Violated);
/// assert_eq!(ser.anomaly.as_deref(), Some("write skew"));
/// ```
pub fn decide(
    input: &Input<'_>,
    level: Level,
    evidence: EvidenceChoice,
    limits: &Limits,
) -> Result<Verdict, DecideError> {
    Decider::new(input, evidence, limits)?.decide(level)
}

/// Decides every level, strongest first (strict-ser only when the input carries real time).
pub fn decide_all(
    input: &Input<'_>,
    evidence: EvidenceChoice,
    limits: &Limits,
) -> Result<VerdictsReport, DecideError> {
    Decider::new(input, evidence, limits)?.all()
}

/// Decides levels of one input, remembering every verdict so that each level is decided
/// once and every answer agrees with the others.
pub struct Decider<'i, 'h> {
    input: &'i Input<'h>,
    uses: EvidenceUse,
    limits: Limits,
    deadline: Option<Instant>,
    memo: [Option<Verdict>; Level::ALL.len()],
    /// The history the checkers see (without its write order for black-box evidence).
    stripped: Option<History>,
    /// The history with its known write order as reads (si, ser on write-order evidence).
    with_order: Option<Option<History>>,
    /// The history with its real-time order (and write order) as reads (strict-ser).
    with_real_time: Option<Option<History>>,
    /// Deciding ser only for its serial order, on behalf of si or pc ([`Self::after_ser`]).
    ser_for_weaker: bool,
    /// `Some(false)` once the known version order was found partial (then pc, si, ser and
    /// strict-ser are left to the commit-order search; otherwise the dependency graph,
    /// `ser::dependency_graph`, decides them).
    complete_order: Option<bool>,
}

/// Failed prefixes the ser search may memoise when it runs only to lend si or pc its order.
const SER_FOR_WEAKER_STATES: usize = 1_000_000;

/// The levels whose verdicts [`decide_all`] reports, strongest first.
const STRONGEST_FIRST: [Level; 8] = [
    Level::StrictSerializable,
    Level::Serializable,
    Level::Snapshot,
    Level::Prefix,
    Level::Causal,
    Level::ReadAtomic,
    Level::ReadCommitted,
    Level::CutIsolation,
];

/// Histories up to this many transactions get a black-box second opinion when the
/// timestamps show a violation.
const SECOND_OPINION_TXNS: usize = 20_000;

impl<'i, 'h> Decider<'i, 'h> {
    /// A decider for `input` on the evidence `choice`; the timeout starts now.
    pub fn new(
        input: &'i Input<'h>,
        choice: EvidenceChoice,
        limits: &Limits,
    ) -> Result<Self, DecideError> {
        let history = input.history_if_built();
        let uses = EvidenceUse::resolve(
            input.source(),
            history,
            input.timestamped().is_some(),
            choice,
        )?;
        let stripped = match history {
            Some(h) if !uses.write_order && uses.write_order_available => {
                Some(h.without_write_order())
            }
            _ => None,
        };
        Ok(Decider {
            input,
            uses,
            limits: limits.clone(),
            // A limit past what an `Instant` can hold is no limit (not a panic).
            deadline: limits.timeout.and_then(|t| Instant::now().checked_add(t)),
            memo: Default::default(),
            stripped,
            with_order: None,
            with_real_time: None,
            ser_for_weaker: false,
            complete_order: None,
        })
    }

    /// What the verdicts use.
    pub fn evidence(&self) -> EvidenceUse {
        self.uses
    }

    /// The history the checkers see (built from the timestamped view on first use).
    fn history(&self) -> Result<&History, DecideError> {
        match &self.stripped {
            Some(h) => Ok(h),
            None => Ok(self.input.history()?),
        }
    }

    fn remaining(&self) -> Option<Duration> {
        self.deadline.map(|d| {
            d.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1))
        })
    }

    /// Decides `level`.
    pub fn decide(&mut self, level: Level) -> Result<Verdict, DecideError> {
        if let Some(v) = &self.memo[level as usize] {
            return Ok(v.clone());
        }
        let verdict = match level {
            // On the database's timestamps, si decides first: a history whose timestamps
            // show si holds every weaker level, whatever the black-box view of its values
            // (a value appended twice, a negative value) could say; `--level cc` and
            // `--level all` then agree with `--level si`.
            Level::ReadCommitted
            | Level::CutIsolation
            | Level::ReadAtomic
            | Level::Causal
            | Level::Prefix
                if self.uses.timestamps
                    && self.decide(Level::Snapshot)?.verdict == Outcome::Consistent =>
            {
                let si = self.decide(Level::Snapshot)?;
                si.implying(level, si.evidence)
            }
            Level::ReadCommitted | Level::CutIsolation | Level::ReadAtomic | Level::Causal => {
                self.weak(level)?
            }
            Level::Prefix => self.after_ser(StrongLevel::Prefix)?,
            Level::Snapshot if self.uses.timestamps => self.timestamps(TsLevel::Snapshot)?,
            Level::Snapshot => self.after_ser(StrongLevel::Snapshot)?,
            Level::Serializable if self.uses.timestamps => {
                let si = self.decide(Level::Snapshot)?;
                let mut v = self.after_weaker(&si, |d| d.timestamps(TsLevel::Serializable))?;
                if si.verdict == Outcome::Violated {
                    // Say what the commit timestamps alone show.
                    let own = self.timestamps(TsLevel::Serializable)?;
                    if own.is_consistent() {
                        v.note = Some(
                            "the commit timestamps alone order the transactions serially, but \
                             the start timestamps are not snapshots of that order (si fails, \
                             and ser implies si); a database that does not read from a \
                             snapshot taken at its start timestamp is judged with --evidence \
                             black-box"
                                .to_string(),
                        );
                    }
                }
                v
            }
            Level::Serializable => self.strong(StrongLevel::Serializable)?,
            Level::StrictSerializable => {
                if !self.uses.real_time {
                    return Err(EvidenceUnavailable {
                        input: self.input.source().to_string(),
                        asked: Evidence::RealTime,
                        why: "strict serializability needs the clients' real-time intervals \
                              (a Jepsen history with :invoke operations carries them; \
                              --evidence black-box or timestamps leaves them out)"
                            .to_string(),
                    }
                    .into());
                }
                let ser = self.decide(Level::Serializable)?;
                self.after_weaker(&ser, |d| d.strict())?
            }
        };
        let verdict = self.with_observed_anomalies(verdict)?;
        // An implied verdict keeps the evidence of the verdict that implies it (what showed
        // it), not the evidence this level's own check would have used.
        let verdict = with_rc_model_note(Verdict { level, ..verdict });
        self.memo[level as usize] = Some(verdict.clone());
        Ok(verdict)
    }

    /// A verdict that the anomalies the reader saw in the input itself (Elle's incompatible
    /// orders, duplicate elements: `History::observed_anomalies`) overrule: no commit order
    /// explains them, so every level that forbids one is violated, whatever the checker found
    /// with the version order the reader had to pick.
    fn with_observed_anomalies(&self, v: Verdict) -> Result<Verdict, DecideError> {
        if v.verdict == Outcome::Violated {
            return Ok(v);
        }
        let Some(history) = self.input.history_if_built() else {
            return Ok(v);
        };
        let Some(seen) = history
            .observed_anomalies()
            .iter()
            .find(|a| a.violates(v.level))
        else {
            return Ok(v);
        };
        Ok(Verdict {
            verdict: Outcome::Violated,
            anomaly: Some(seen.anomaly.name().to_string()),
            anomaly_names: Some(seen.anomaly.row().names()),
            unknown_reason: None,
            note: Some(format!(
                "seen in the input itself: {}{}",
                seen.description,
                seen.line.map_or(String::new(), |l| format!(" (line {l})"))
            )),
            ..v
        })
    }

    /// The verdict of a level whose own check does not prove the weaker level `weaker`:
    /// violated if `weaker` is (without running the own check), else its own check (unknown
    /// if `weaker` is unknown and the own check finds no violation).
    fn after_weaker(
        &mut self,
        weaker: &Verdict,
        own: impl FnOnce(&mut Self) -> Result<Verdict, DecideError>,
    ) -> Result<Verdict, DecideError> {
        if weaker.verdict == Outcome::Violated {
            // `decide` sets the level and its evidence.
            return Ok(weaker.implying(weaker.level, weaker.evidence));
        }
        let mut v = own(self)?;
        if weaker.verdict == Outcome::Unknown && v.verdict == Outcome::Consistent {
            v.verdict = Outcome::Unknown;
            v.unknown_reason = Some(format!(
                "{} is unknown ({})",
                weaker.level,
                weaker
                    .unknown_reason
                    .as_deref()
                    .unwrap_or("no reason given")
            ));
        }
        Ok(v)
    }

    fn verdict(
        &self,
        level: Level,
        verdict: Outcome,
        anomaly: Option<AnomalyId>,
        unknown_reason: Option<String>,
        report: Option<LevelReport>,
    ) -> Verdict {
        Verdict {
            level,
            verdict,
            evidence: self.uses.for_level(level),
            implied_by: None,
            anomaly: anomaly.map(|id| id.name().to_string()),
            anomaly_names: anomaly.map(|id| id.row().names()),
            unknown_reason,
            note: None,
            report: report.map(Arc::new),
        }
    }

    /// A check that could not run to its end: unknown, naming the limit.
    fn limit_reached(&self, level: Level, e: CheckError) -> Verdict {
        self.verdict(level, Outcome::Unknown, None, Some(e.to_string()), None)
    }

    fn weak(&mut self, level: Level) -> Result<Verdict, DecideError> {
        let options = CheckOptions {
            witness: self.limits.witness,
            max_violations: self.limits.max_violations,
            memory: self.limits.memory,
            deadline: self.deadline,
        };
        Ok(match check::check(self.history()?, level, &options) {
            Ok(mut report) => {
                if let Some(max) = self.limits.max_cycle_edges {
                    report.cut_cycles(max);
                }
                let (outcome, anomaly) = if report.is_consistent() {
                    (Outcome::Consistent, None)
                } else {
                    (Outcome::Violated, weak_anomaly(&report))
                };
                self.verdict(
                    level,
                    outcome,
                    anomaly,
                    None,
                    Some(LevelReport::Weak(report)),
                )
            }
            Err(e) => self.limit_reached(level, e),
        })
    }

    fn strong_options(&self) -> StrongOptions {
        let defaults = StrongOptions::default();
        if self.ser_for_weaker {
            return StrongOptions {
                engine: Engine::Search,
                timeout: self.remaining(),
                witness: self.limits.witness,
                explain: false,
                max_failed_states: SER_FOR_WEAKER_STATES,
                memory: self.limits.memory,
                ..defaults
            };
        }
        StrongOptions {
            engine: self.limits.engine,
            timeout: self.remaining(),
            witness: self.limits.witness,
            explain: self.limits.explain,
            explain_timeout: self
                .limits
                .explain_timeout
                .unwrap_or(defaults.explain_timeout),
            memory: self.limits.memory,
            ..defaults
        }
    }

    /// pc or si, taking ser's serial order when ser holds (issue 23): a serial order is a
    /// commit order of every weaker level, and the ser search finds one in near-linear time
    /// where the split histories of si and pc make their own searches backtrack. ser gets
    /// half the time left, the search alone with a small state budget
    /// ([`SER_FOR_WEAKER_STATES`]) and no explanation, so that an unserializable history
    /// costs little more; a ser verdict other than consistent is not kept (asking for ser
    /// later decides it in full), and the level is then decided by its own search.
    fn after_ser(&mut self, level: StrongLevel) -> Result<Verdict, DecideError> {
        if !self.uses.timestamps {
            let known = self.memo[Level::Serializable as usize].is_some();
            let (deadline, explain) = (self.deadline, self.limits.explain);
            self.deadline = deadline.map(|d| {
                let now = Instant::now();
                now + d.saturating_duration_since(now) / 2
            });
            self.limits.explain = false;
            self.ser_for_weaker = true;
            let ser = self.decide(Level::Serializable);
            (self.deadline, self.limits.explain) = (deadline, explain);
            self.ser_for_weaker = false;
            let ser = ser?;
            if ser.is_consistent() {
                return Ok(ser.implying(level.level(), ser.evidence));
            }
            if !known {
                self.memo[Level::Serializable as usize] = None;
            }
        }
        self.strong(level)
    }

    /// pc, si or ser: on the dependency graph when the known write order is used and complete
    /// ([`Decider::known_order`]); otherwise by the commit-order search, si and ser on the
    /// history with its (partial) known write order as reads (exact there, see
    /// `History::with_write_order_as_reads`; pc uses the write order through its causal part).
    fn strong(&mut self, level: StrongLevel) -> Result<Verdict, DecideError> {
        if let Some(v) = self.known_order(level.level())? {
            return Ok(v);
        }
        let use_order = self.uses.write_order && level != StrongLevel::Prefix;
        if use_order && self.with_order.is_none() {
            self.with_order = Some(self.history()?.with_write_order_as_reads());
        }
        let history = match (&self.with_order, use_order) {
            (Some(Some(h)), true) => h,
            _ => self.history()?,
        };
        let report = ser::check_strong(history, level, &self.strong_options());
        Ok(self.strong_verdict(level.level(), report))
    }

    fn strong_verdict(&self, level: Level, report: Result<StrongReport, CheckError>) -> Verdict {
        match report {
            Ok(mut report) => {
                report.level = level;
                let anomaly = strong_anomaly(&report);
                let reason = report.unknown_reason.clone();
                self.verdict(
                    level,
                    report.verdict,
                    anomaly,
                    reason,
                    Some(LevelReport::Strong(Box::new(report))),
                )
            }
            Err(e) => self.limit_reached(level, e),
        }
    }

    /// pc, si, ser or strict-ser on Adya's dependency graph (`ser::dependency_graph`), when
    /// the verdicts use the known write order and every key's order is known (up to the
    /// unobserved appends after the last one shown): the decision for those levels, linear in
    /// the history. `None` when the order is not used or partial, or (rarely, si only) the
    /// graph cannot keep two unordered writers apart: the commit-order search decides then.
    fn known_order(&mut self, level: Level) -> Result<Option<Verdict>, DecideError> {
        if !self.uses.write_order || self.complete_order == Some(false) {
            return Ok(None);
        }
        // Causal consistency with the known write order, which every level here implies: the
        // causal checker's own report when it has run, else it runs now.
        let memo =
            self.memo[Level::Causal as usize]
                .as_ref()
                .and_then(|v| match v.report.as_deref() {
                    Some(LevelReport::Weak(r)) if v.implied_by.is_none() => Some(r.clone()),
                    _ => None,
                });
        let causal = match memo {
            Some(r) => r,
            None => {
                let options = CheckOptions {
                    witness: false,
                    max_violations: self.limits.max_violations,
                    memory: self.limits.memory,
                    deadline: self.deadline,
                };
                match check::check(self.history()?, Level::Causal, &options) {
                    Ok(r) => r,
                    Err(e) => return Ok(Some(self.limit_reached(level, e))),
                }
            }
        };
        let options = ser::KnownOrderOptions {
            witness: self.limits.witness,
            engine: self.limits.engine,
        };
        match ser::check_known_order(self.history()?, level, &causal, &options) {
            Ok(report) => Ok(Some(self.strong_verdict(level, Ok(report)))),
            Err(ser::Undecided::PartialOrder) => {
                self.complete_order = Some(false);
                Ok(None)
            }
            Err(_) => Ok(None),
        }
    }

    /// si or ser on the database's timestamps; a violation of si gets a black-box second
    /// opinion on small histories (does some other commit order explain the reads?).
    fn timestamps(&mut self, level: TsLevel) -> Result<Verdict, DecideError> {
        let th = self
            .input
            .timestamped()
            .expect("timestamps are used only when present");
        let report = check_timestamps(
            th,
            level,
            &TsCheckOptions {
                max_violations: self.limits.max_violations,
            },
        );
        let as_level = match level {
            TsLevel::Snapshot => Level::Snapshot,
            TsLevel::Serializable => Level::Serializable,
        };
        let (outcome, anomaly) = if report.consistent {
            (Outcome::Consistent, None)
        } else {
            (
                Outcome::Violated,
                report.violations.first().map(|v| v.anomaly()),
            )
        };
        let mut v = self.verdict(
            as_level,
            outcome,
            anomaly,
            None,
            Some(LevelReport::Timestamps(report)),
        );
        if outcome == Outcome::Violated
            && level == TsLevel::Snapshot
            && th.txns.len() <= SECOND_OPINION_TXNS
        {
            let black_box = ser::check_strong(
                self.history()?,
                StrongLevel::Snapshot,
                &StrongOptions {
                    explain: false,
                    witness: false,
                    ..self.strong_options()
                },
            );
            v.note = match black_box.map(|r| r.verdict) {
                Ok(Outcome::Consistent) => Some(
                    "the database's timestamps violate si, but some other commit order explains \
                     every read (si on the reads alone: consistent): the database did not keep \
                     its own order, though the reads alone show no anomaly"
                        .to_string(),
                ),
                Ok(Outcome::Violated) => Some(
                    "no other commit order explains the reads either (si on the reads alone: \
                     violated)"
                        .to_string(),
                ),
                _ => None,
            };
        }
        Ok(v)
    }

    /// Serializability in an order that respects the clients' real-time order.
    fn strict(&mut self) -> Result<Verdict, DecideError> {
        if let Some(v) = self.known_order(Level::StrictSerializable)? {
            return Ok(v);
        }
        if self.with_real_time.is_none() {
            let h = self.history()?;
            let mut pairs = h.real_time_order();
            if self.uses.write_order {
                pairs.extend(
                    h.known_write_order()
                        .iter()
                        .map(|&(a, b)| (h.op(a).txn, h.op(b).txn)),
                );
            }
            self.with_real_time =
                Some(h.with_txn_order_as_reads(pairs, "completed before the invocation of"));
        }
        let history = match &self.with_real_time {
            Some(Some(h)) => h,
            _ => self.history()?,
        };
        let report = ser::check_strong(history, StrongLevel::Serializable, &self.strong_options());
        Ok(self.strong_verdict(Level::StrictSerializable, report))
    }

    /// Remembers `v` as the verdict of `level`, implied by `by`'s verdict.
    fn imply(&mut self, level: Level, by: &Verdict) {
        if self.memo[level as usize].is_some() {
            return;
        }
        self.memo[level as usize] = Some(by.implying(level, by.evidence));
    }

    /// Every level's verdict, strongest first, checking as little as the implications allow.
    pub fn all(&mut self) -> Result<VerdictsReport, DecideError> {
        let cc = self.decide(Level::Causal)?;
        match cc.verdict {
            Outcome::Consistent => {
                self.imply(Level::ReadAtomic, &cc);
                self.imply(Level::ReadCommitted, &cc);
                self.imply(Level::CutIsolation, &cc);
            }
            _ => {
                let ra = self.decide(Level::ReadAtomic)?;
                if ra.is_consistent() {
                    self.imply(Level::ReadCommitted, &ra);
                    self.imply(Level::CutIsolation, &ra);
                } else {
                    self.decide(Level::ReadCommitted)?;
                    self.decide(Level::CutIsolation)?;
                }
            }
        }
        match cc.verdict {
            Outcome::Violated => {
                for level in [Level::Prefix, Level::Snapshot, Level::Serializable] {
                    self.imply(level, &cc);
                }
                if self.uses.real_time {
                    self.imply(Level::StrictSerializable, &cc);
                }
            }
            _ if self.uses.timestamps => {
                let si = self.decide(Level::Snapshot)?;
                if si.is_consistent() {
                    self.imply(Level::Prefix, &si);
                } else {
                    self.decide(Level::Prefix)?;
                }
                self.decide(Level::Serializable)?;
            }
            _ => {
                let ser = self.decide(Level::Serializable)?;
                if ser.is_consistent() {
                    self.imply(Level::Snapshot, &ser);
                    self.imply(Level::Prefix, &ser);
                } else {
                    let si = self.decide(Level::Snapshot)?;
                    if si.is_consistent() {
                        self.imply(Level::Prefix, &si);
                    } else {
                        self.decide(Level::Prefix)?;
                    }
                }
            }
        }
        if self.uses.real_time {
            self.decide(Level::StrictSerializable)?;
        }
        let mut verdicts: Vec<Verdict> = STRONGEST_FIRST
            .iter()
            .filter_map(|&l| self.memo[l as usize].clone())
            .collect();
        keep_the_chain(&mut verdicts);
        Ok(VerdictsReport::new(
            self.input.source(),
            self.uses,
            verdicts,
        ))
    }
}

/// Guards the implications between levels: a level found consistent while a level it
/// implies is violated means two checkers disagree — a bug. Debug builds stop; release
/// builds report the stronger level as unknown, saying so, rather than a contradiction.
pub fn keep_the_chain(verdicts: &mut [Verdict]) {
    for i in 0..verdicts.len() {
        for j in 0..verdicts.len() {
            let (strong, weak) = (&verdicts[i], &verdicts[j]);
            if i != j
                && strong.level.implies(weak.level)
                && strong.verdict == Outcome::Consistent
                && weak.verdict == Outcome::Violated
            {
                debug_assert!(
                    false,
                    "{} consistent but {} violated: the checkers disagree",
                    strong.level, weak.level
                );
                let weak_level = weak.level;
                let strong = &mut verdicts[i];
                strong.verdict = Outcome::Unknown;
                strong.unknown_reason = Some(format!(
                    "internal: the {} check found no violation but {weak_level}, which it \
                     implies, is violated; please report this history",
                    strong.level
                ));
            }
        }
    }
}

/// isopredict's rc is Biswas & Enea's read committed, which forbids non-monotonic reads inside
/// a transaction; Adya's PL-2 (Elle's read-committed) forbids G0 and G1 only and allows them
/// (a G-single read skew). Where an rc violation is one PL-2 allows, the verdict says which rc
/// it judged.
fn with_rc_model_note(mut v: Verdict) -> Verdict {
    let beyond_pl2 = matches!(
        v.anomaly_id(),
        Some(AnomalyId::NonMonotonicReadCausal | AnomalyId::NonMonotonicRead)
    );
    if v.level == Level::ReadCommitted
        && v.verdict == Outcome::Violated
        && v.implied_by.is_none()
        && v.note.is_none()
        && beyond_pl2
    {
        v.note = Some(
            "rc here is Biswas & Enea's read committed, stronger than Adya's PL-2 (Elle's \
             read-committed), which forbids only G0 and G1 and allows this non-monotonic read \
             (a G-single read skew)"
                .to_string(),
        );
    }
    v
}

/// The one classifier of the decision core: the anomaly a check's report shows, as a row of
/// the anomaly table (`history::anomalies`), whichever checker wrote the report — a weak
/// level's first cycle (its Plume pattern), else its first bad read; a strong level's
/// explanation (the engineer's name of its core), else its causal violation's; the timestamp
/// checker's first broken axiom. Every view of a verdict prints this row's words.
pub fn anomaly_of(report: &LevelReport) -> Option<AnomalyId> {
    match report {
        LevelReport::Weak(r) => weak_anomaly(r),
        LevelReport::Strong(r) => strong_anomaly(r),
        LevelReport::Timestamps(r) => r.violations.first().map(|v| v.anomaly()),
    }
}

/// The violation a weak level's report is named by ([`shown_weak_violation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeakViolation<'r> {
    /// A cycle in the commit order the level forces.
    Cycle(&'r CycleReport),
    /// A bad read.
    Read(&'r ReadViolation),
}

impl WeakViolation<'_> {
    /// Its row in the anomaly table (its Plume pattern's).
    pub fn anomaly(self) -> AnomalyId {
        match self {
            WeakViolation::Cycle(c) => c.anomaly.id(),
            WeakViolation::Read(v) => v.anomaly.id(),
        }
    }
}

/// Which violation of a weak level's report names it: its first cycle, else its first bad
/// read. The one choice behind [`anomaly_of`] and every view that describes the violation it
/// names (`pipeline::name_anomaly` for a read atomic or read committed prediction).
pub fn shown_weak_violation(report: &CheckReport) -> Option<WeakViolation<'_>> {
    report
        .cycles
        .first()
        .map(WeakViolation::Cycle)
        .or_else(|| report.read_violations.first().map(WeakViolation::Read))
}

/// The anomaly of a weak level's report ([`shown_weak_violation`]).
fn weak_anomaly(report: &CheckReport) -> Option<AnomalyId> {
    shown_weak_violation(report).map(WeakViolation::anomaly)
}

/// The anomaly of a strong level's violation (its causal violation's when causal fails).
fn strong_anomaly(report: &StrongReport) -> Option<AnomalyId> {
    if report.verdict != Outcome::Violated {
        return None;
    }
    match &report.violation {
        Some(v) => anomalies::by_name(&v.anomaly).map(|r| r.id),
        None => report.causal.as_ref().and_then(weak_anomaly),
    }
}

#[cfg(test)]
mod tests;
