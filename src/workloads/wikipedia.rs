//! Wikipedia (OLTP-Bench's MediaWiki workload, as ported to MonkeyDB and run by IsoPredict
//! PLDI'24 §7; notes/workloads.md §5) at scale 1: 2 pages, 2 users.
//!
//! Schema: the twelve tables of OLTP-Bench's MySQL DDL (lower-case names, DDL column order),
//! keyed by their primary key, or by their last UNIQUE constraint when they have none
//! (watchlist, user_groups); value_backup has no key.
//!
//! Initial data (OLTP-Bench's loader with IsoPredict's fixed seeds): users 1 and 2 with edit
//! count 0; page 1 (namespace 0, title `CYZH6>R4 [1]`, latest revision 4) and page 2
//! (namespace 3, latest revision 5); revisions and texts 1..4, all of page 1 by user 1 (the
//! loader never flushes page 2's batch); every other table empty. LastPrimaryKey of revision
//! and text is 4. Texts, names and dates the loader draws at random are fixed stand-ins.
//!
//! Mix: AddWatchList 1, RemoveWatchList 1, UpdatePage 7, GetPageAnonymous 90,
//! GetPageAuthenticated 1. Parameters come from one `Random(0)` shared by all terminals that
//! OLTP-Bench reseeds with the page id before generating the title, so every call edits or
//! reads page 1 (namespace 0) and a call that needs a user gets user 1. The one parameter that
//! varies is the user of UpdatePage (and of GetPageAnonymous, which does not use it): it is the
//! anonymous user 0 exactly when the shared generator was last used to generate the revision
//! text of an UpdatePage that edited text 1 (i.e. any UpdatePage after the first, since
//! UpdatePage sets page_latest to 1) — what the reference model computed with OLTP-Bench's
//! histograms; here that generator is modelled by this one bit ([`SharedGenerator`]).
//!
//! Quirks kept: UpdatePage spans two to four transactions (A: the page read; B: the edit; with
//! watchers, C: their notification timestamps and D: their accounts, the log and the counts),
//! and hard-codes the new text id 100 and the new latest revision 1; GetPageAnonymous also
//! reads the whole revision table (debugging output IsoPredict added).
//!
//! Invariants A15–A17 (MonkeyDB's `wikipedia_cr`): per user, the edit count does not exceed
//! the user's recentchanges rows (A15) nor logging rows (A16); per user id, as many logging as
//! recentchanges rows (A17).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::store::{Assign, CmpOp, Loader, Outcome, Pred, Projection, Snapshot, Table, Tx, Value};

use super::{InvariantCheck, Procedure, Step, Terminal, Workload};

/// Pages at scale 1.
pub const PAGES: i64 = 2;
/// Users at scale 1.
pub const USERS: i64 = 2;
/// The anonymous user.
pub const ANONYMOUS: i64 = 0;
/// The title of page 1, which every call reads or edits.
pub const TITLE: &str = "CYZH6>R4 [1]";
/// The namespace of page 1.
pub const NAMESPACE: i64 = 0;
/// The text id UpdatePage gives every new revision (IsoPredict's hard-coded value).
pub const NEW_TEXT_ID: i64 = 100;
/// The latest revision UpdatePage gives the page (IsoPredict's hard-coded value).
pub const NEW_LATEST_REVISION: i64 = 1;

const PAGE_ID: i64 = 1;
const LOADED_REVISIONS: i64 = 4;
/// Stand-in for OLTP-Bench's `TimeUtil.getCurrentTimeString14()`.
const NOW: &str = "20240101000000";
/// Stand-in for the generated user IP.
const USER_IP: &str = "10.0.0.1";

const PROCEDURES: &[Procedure] = &[
    Procedure {
        name: "AddWatchList",
        weight: 1,
    },
    Procedure {
        name: "RemoveWatchList",
        weight: 1,
    },
    Procedure {
        name: "UpdatePage",
        weight: 7,
    },
    Procedure {
        name: "GetPageAnonymous",
        weight: 90,
    },
    Procedure {
        name: "GetPageAuthenticated",
        weight: 1,
    },
];

const ADD_WATCH_LIST: usize = 0;
const REMOVE_WATCH_LIST: usize = 1;
const UPDATE_PAGE: usize = 2;
const GET_PAGE_ANONYMOUS: usize = 3;

struct Tables {
    ipblocks: Table,
    logging: Table,
    page: Table,
    page_backup: Table,
    page_restrictions: Table,
    recentchanges: Table,
    revision: Table,
    text: Table,
    useracct: Table,
    user_groups: Table,
    value_backup: Table,
    watchlist: Table,
}

const PAGE_COLUMNS: &[&str] = &[
    "page_id",
    "page_namespace",
    "page_title",
    "page_restrictions",
    "page_counter",
    "page_is_redirect",
    "page_is_new",
    "page_random",
    "page_touched",
    "page_latest",
    "page_len",
];

/// The columns of `ipblocks`.
const IPBLOCKS_COLUMNS: &[&str] = &[
    "ipb_id",
    "ipb_address",
    "ipb_user",
    "ipb_by",
    "ipb_by_text",
    "ipb_reason",
    "ipb_timestamp",
    "ipb_auto",
    "ipb_anon_only",
    "ipb_create_account",
    "ipb_enable_autoblock",
    "ipb_expiry",
    "ipb_range_start",
    "ipb_range_end",
    "ipb_deleted",
    "ipb_block_email",
    "ipb_allow_usertalk",
];

/// The columns of `logging`.
const LOGGING_COLUMNS: &[&str] = &[
    "log_id",
    "log_type",
    "log_action",
    "log_timestamp",
    "log_user",
    "log_namespace",
    "log_title",
    "log_comment",
    "log_params",
    "log_deleted",
    "log_user_text",
    "log_page",
];

/// The columns of `recentchanges`.
const RECENTCHANGES_COLUMNS: &[&str] = &[
    "rc_id",
    "rc_timestamp",
    "rc_cur_time",
    "rc_user",
    "rc_user_text",
    "rc_namespace",
    "rc_title",
    "rc_comment",
    "rc_minor",
    "rc_bot",
    "rc_new",
    "rc_cur_id",
    "rc_this_oldid",
    "rc_last_oldid",
    "rc_type",
    "rc_moved_to_ns",
    "rc_moved_to_title",
    "rc_patrolled",
    "rc_ip",
    "rc_old_len",
    "rc_new_len",
    "rc_deleted",
    "rc_logid",
    "rc_log_type",
    "rc_log_action",
    "rc_params",
];

/// The columns of `revision`.
const REVISION_COLUMNS: &[&str] = &[
    "rev_id",
    "rev_page",
    "rev_text_id",
    "rev_comment",
    "rev_user",
    "rev_user_text",
    "rev_timestamp",
    "rev_minor_edit",
    "rev_deleted",
    "rev_len",
    "rev_parent_id",
];

/// The columns of `useracct`.
const USERACCT_COLUMNS: &[&str] = &[
    "user_id",
    "user_name",
    "user_real_name",
    "user_password",
    "user_newpassword",
    "user_newpass_time",
    "user_email",
    "user_options",
    "user_touched",
    "user_token",
    "user_email_authenticated",
    "user_email_token",
    "user_email_token_expires",
    "user_registration",
    "user_editcount",
];

fn tables() -> Tables {
    Tables {
        ipblocks: Table::new("ipblocks", IPBLOCKS_COLUMNS, Some(&["ipb_id"])),
        logging: Table::new("logging", LOGGING_COLUMNS, Some(&["log_id"])),
        page: Table::new("page", PAGE_COLUMNS, Some(&["page_id"])),
        page_backup: Table::new("page_backup", PAGE_COLUMNS, Some(&["page_id"])),
        page_restrictions: Table::new(
            "page_restrictions",
            &[
                "pr_page",
                "pr_type",
                "pr_level",
                "pr_cascade",
                "pr_user",
                "pr_expiry",
                "pr_id",
            ],
            Some(&["pr_id"]),
        ),
        recentchanges: Table::new("recentchanges", RECENTCHANGES_COLUMNS, Some(&["rc_id"])),
        revision: Table::new("revision", REVISION_COLUMNS, Some(&["rev_id"])),
        text: Table::new(
            "text",
            &["old_id", "old_text", "old_flags", "old_page"],
            Some(&["old_id"]),
        ),
        useracct: Table::new("useracct", USERACCT_COLUMNS, Some(&["user_id"])),
        user_groups: Table::new(
            "user_groups",
            &["ug_user", "ug_group"],
            Some(&["ug_user", "ug_group"]),
        ),
        value_backup: Table::new("value_backup", &["table_name", "maxid"], None),
        watchlist: Table::new(
            "watchlist",
            &[
                "wl_user",
                "wl_namespace",
                "wl_title",
                "wl_notificationtimestamp",
            ],
            Some(&["wl_user", "wl_namespace", "wl_title"]),
        ),
    }
}

/// The loaded text of revision `id` (a stand-in for the loader's random text).
fn loaded_text(id: i64) -> String {
    format!("text of revision {id} of page 1 ").repeat(8)
}

/// The Wikipedia workload.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wikipedia;

impl Wikipedia {
    fn load_tables(t: &Tables, l: &mut Loader<'_>) {
        for table in [
            &t.ipblocks,
            &t.logging,
            &t.page,
            &t.page_backup,
            &t.page_restrictions,
            &t.recentchanges,
            &t.revision,
            &t.text,
            &t.useracct,
            &t.user_groups,
            &t.value_backup,
            &t.watchlist,
        ] {
            table.create(l);
        }
        for user in 1..=USERS {
            t.useracct.insert(
                l,
                &[
                    ("user_id", Value::Int(user)),
                    ("user_name", Value::from(format!("{user}User"))),
                    ("user_real_name", Value::from(format!("Real Name {user}"))),
                    ("user_password", Value::text("********")),
                    ("user_newpassword", Value::text("********")),
                    ("user_newpass_time", Value::text(NOW)),
                    ("user_email", Value::from(format!("user{user}@example.org"))),
                    ("user_options", Value::text("fake_longoptionslist")),
                    ("user_touched", Value::text(NOW)),
                    (
                        "user_token",
                        Value::text("0123456789abcdef0123456789abcdef"),
                    ),
                    ("user_email_authenticated", Value::Null),
                    ("user_email_token", Value::Null),
                    ("user_email_token_expires", Value::Null),
                    ("user_registration", Value::Null),
                    ("user_editcount", Value::Int(0)),
                ],
            );
        }
        let last_text_len = loaded_text(LOADED_REVISIONS).len() as i64;
        for (page, namespace, title, latest, len) in [
            (
                1,
                NAMESPACE,
                TITLE.to_string(),
                LOADED_REVISIONS,
                last_text_len,
            ),
            (2, 3, format!("KQ2Q5PNW [{}]", 2), LOADED_REVISIONS + 1, 0),
        ] {
            t.page.insert(
                l,
                &[
                    ("page_id", Value::Int(page)),
                    ("page_namespace", Value::Int(namespace)),
                    ("page_title", Value::from(title)),
                    ("page_restrictions", Value::text("edit=sysop:move=sysop")),
                    ("page_counter", Value::Int(0)),
                    ("page_is_redirect", Value::Int(0)),
                    ("page_is_new", Value::Int(0)),
                    ("page_random", Value::Real(0.5)),
                    ("page_touched", Value::text(NOW)),
                    ("page_latest", Value::Int(latest)),
                    ("page_len", Value::Int(len)),
                ],
            );
        }
        for id in 1..=LOADED_REVISIONS {
            t.text.insert(
                l,
                &[
                    ("old_id", Value::Int(id)),
                    ("old_text", Value::from(loaded_text(id))),
                    ("old_flags", Value::text("utf-8")),
                    ("old_page", Value::Int(PAGE_ID)),
                ],
            );
            t.revision.insert(
                l,
                &[
                    ("rev_id", Value::Int(id)),
                    ("rev_page", Value::Int(PAGE_ID)),
                    ("rev_text_id", Value::Int(id)),
                    ("rev_comment", Value::from(format!("comment {id}"))),
                    ("rev_user", Value::Int(1)),
                    ("rev_user_text", Value::text("user text")),
                    ("rev_timestamp", Value::text(NOW)),
                    ("rev_minor_edit", Value::Int(0)),
                    ("rev_deleted", Value::Int(0)),
                    ("rev_len", Value::Int(0)),
                    ("rev_parent_id", Value::Int(0)),
                ],
            );
        }
    }
}

impl Workload for Wikipedia {
    fn name(&self) -> &'static str {
        "wikipedia"
    }

    fn procedures(&self) -> &'static [Procedure] {
        PROCEDURES
    }

    fn first_session(&self) -> u64 {
        10
    }

    fn load(&self, loader: &mut Loader<'_>) {
        Self::load_tables(&tables(), loader);
    }

    /// A terminal with a generator of its own (see [`Workload::terminals`] for a run's
    /// terminals, which share one).
    fn terminal(&self, _id: usize) -> Box<dyn Terminal> {
        Box::new(WikipediaTerminal::new(Arc::default()))
    }

    fn terminals(&self, count: usize) -> Vec<Box<dyn Terminal>> {
        let shared: Arc<Mutex<SharedGenerator>> = Arc::default();
        (0..count)
            .map(|_| Box::new(WikipediaTerminal::new(shared.clone())) as Box<dyn Terminal>)
            .collect()
    }

    fn tables(&self) -> Vec<Table> {
        let t = tables();
        vec![
            t.ipblocks,
            t.logging,
            t.page,
            t.page_backup,
            t.page_restrictions,
            t.recentchanges,
            t.revision,
            t.text,
            t.useracct,
            t.user_groups,
            t.value_backup,
            t.watchlist,
        ]
    }

    fn invariants(&self, state: &mut Snapshot<'_>) -> Vec<InvariantCheck> {
        invariants(&tables(), state)
    }
}

/// OLTP-Bench's benchmark-wide `Random(0)`, shared by the terminals, as far as it decides a
/// run: whether the next call's user draw gives the anonymous user.
#[derive(Debug, Default)]
pub struct SharedGenerator {
    /// Whether it was last used to generate a revision of text 1.
    after_revision_of_text_1: bool,
}

impl SharedGenerator {
    /// A call's parameters: the user (1, or 0 when `needs_user` is false and the generator
    /// is in its anonymous state); the generator is then reseeded by the page id.
    fn call_user(&mut self, needs_user: bool) -> i64 {
        let anonymous = !needs_user && self.after_revision_of_text_1;
        self.after_revision_of_text_1 = false;
        if anonymous {
            ANONYMOUS
        } else {
            1
        }
    }

    /// UpdatePage's comment, minor flag and new text, generated from the text it read.
    fn revision(&mut self, old_text_id: i64) {
        self.after_revision_of_text_1 = old_text_id == 1;
    }
}

/// What GetPageAnonymous returns to UpdatePage.
#[derive(Debug, Clone)]
struct Article {
    text_id: i64,
    revision_id: i64,
    text_len: i64,
}

/// UpdatePage's state between its transactions.
#[derive(Debug, Clone)]
struct Update {
    user: i64,
    article: Article,
    watchers: Vec<i64>,
}

struct WikipediaTerminal {
    t: Tables,
    shared: Arc<Mutex<SharedGenerator>>,
    update: Option<Update>,
    /// The current call's parameters in words (for reports).
    parameters: String,
}

const ROLLBACK: Step = Step::Done(Outcome::Rollback);
const COMMIT: Step = Step::Done(Outcome::Commit);

impl WikipediaTerminal {
    fn new(shared: Arc<Mutex<SharedGenerator>>) -> WikipediaTerminal {
        WikipediaTerminal {
            t: tables(),
            shared,
            update: None,
            parameters: String::new(),
        }
    }

    fn generator(&self) -> std::sync::MutexGuard<'_, SharedGenerator> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// GetPageAnonymous, or its page part when `user` is given (GetPageAuthenticated, which
    /// checks IP blocks by user instead of by address). `None`: a user abort.
    fn get_page(&self, tx: &mut Tx<'_>, user: Option<i64>) -> Option<Article> {
        let t = &self.t;
        let page = t.page.select(
            tx,
            Projection::All,
            &Pred::eq("page_namespace", NAMESPACE).and(Pred::eq("page_title", TITLE)),
        );
        let page_id = page.first()?[0].as_i64()?;
        t.page_restrictions
            .select(tx, Projection::All, &Pred::eq("pr_page", page_id));
        let blocks = match user {
            Some(u) => Pred::eq("ipb_user", u),
            None => Pred::eq("ipb_address", USER_IP),
        };
        t.ipblocks.select(tx, Projection::All, &blocks);
        let latest = t
            .page
            .select(
                tx,
                Projection::Columns(&["page_latest"]),
                &Pred::eq("page_id", page_id),
            )
            .first()?[0]
            .as_i64()?;
        t.revision.select(tx, Projection::All, &Pred::All);
        let revision = t.revision.select(
            tx,
            Projection::All,
            &Pred::eq("rev_page", page_id).and(Pred::eq("rev_id", latest)),
        );
        let revision = revision.first()?;
        let revision_id = revision[0].as_i64()?;
        let text_id = revision[2].as_i64()?;
        let text = t.text.select(
            tx,
            Projection::Columns(&["old_text", "old_flags"]),
            &Pred::eq("old_id", text_id),
        );
        let text_len = text.first()?[0].to_string().len() as i64;
        Some(Article {
            text_id,
            revision_id,
            text_len,
        })
    }

    fn get_page_authenticated(&self, tx: &mut Tx<'_>, user: i64) -> Step {
        let t = &self.t;
        if t.useracct
            .select(tx, Projection::All, &Pred::eq("user_id", user))
            .is_empty()
        {
            return ROLLBACK;
        }
        t.user_groups.select(
            tx,
            Projection::Columns(&["ug_group"]),
            &Pred::eq("ug_user", user),
        );
        match self.get_page(tx, Some(user)) {
            Some(_) => COMMIT,
            None => ROLLBACK,
        }
    }

    fn touch_user(&self, tx: &mut Tx<'_>, user: i64) {
        self.t.useracct.update(
            tx,
            &[Assign::set("user_touched", NOW)],
            &Pred::eq("user_id", user),
        );
    }

    fn watch_key(user: i64, namespace: i64) -> Pred {
        Pred::eq("wl_user", user)
            .and(Pred::eq("wl_namespace", namespace))
            .and(Pred::eq("wl_title", TITLE))
    }

    fn add_watch_list(&self, tx: &mut Tx<'_>, user: i64) -> Step {
        if user > 0 {
            let mut namespaces = vec![NAMESPACE];
            if NAMESPACE == 0 {
                // A regular page: also watch its talk page.
                namespaces.push(1);
            }
            for ns in namespaces {
                self.t.watchlist.insert(
                    tx,
                    &[
                        ("wl_user", Value::Int(user)),
                        ("wl_namespace", Value::Int(ns)),
                        ("wl_title", Value::text(TITLE)),
                        ("wl_notificationtimestamp", Value::Null),
                    ],
                );
            }
            self.touch_user(tx, user);
        }
        COMMIT
    }

    fn remove_watch_list(&self, tx: &mut Tx<'_>, user: i64) -> Step {
        if user > 0 {
            self.t
                .watchlist
                .delete(tx, &Self::watch_key(user, NAMESPACE));
            if NAMESPACE == 0 {
                self.t.watchlist.delete(tx, &Self::watch_key(user, 1));
            }
            self.touch_user(tx, user);
        }
        COMMIT
    }

    /// UpdatePage's transaction B: the new text, revision, page and recent change, and the
    /// watchers to notify.
    fn update_page_edit(&self, tx: &mut Tx<'_>, u: &Update) -> Vec<i64> {
        let t = &self.t;
        let a = &u.article;
        let new_len = a.text_len;
        t.text.insert(
            tx,
            &[
                ("old_page", Value::Int(PAGE_ID)),
                (
                    "old_text",
                    Value::from(format!("revision of text {}", a.text_id)),
                ),
                ("old_flags", Value::text("utf-8")),
            ],
        );
        t.revision.insert(
            tx,
            &[
                ("rev_page", Value::Int(PAGE_ID)),
                ("rev_text_id", Value::Int(NEW_TEXT_ID)),
                ("rev_comment", Value::text("comment")),
                ("rev_minor_edit", Value::Int(0)),
                ("rev_user", Value::Int(u.user)),
                ("rev_user_text", Value::text(USER_IP)),
                ("rev_timestamp", Value::text(NOW)),
                ("rev_deleted", Value::Int(0)),
                ("rev_len", Value::Int(new_len)),
                ("rev_parent_id", Value::Int(a.revision_id)),
            ],
        );
        t.page.update(
            tx,
            &[
                Assign::set("page_latest", NEW_LATEST_REVISION),
                Assign::set("page_touched", NOW),
                Assign::set("page_is_new", 0i64),
                Assign::set("page_is_redirect", 0i64),
                Assign::set("page_len", new_len),
            ],
            &Pred::eq("page_id", PAGE_ID),
        );
        t.recentchanges.insert(
            tx,
            &[
                ("rc_timestamp", Value::text(NOW)),
                ("rc_cur_time", Value::text(NOW)),
                ("rc_namespace", Value::Int(NAMESPACE)),
                ("rc_title", Value::text(TITLE)),
                ("rc_type", Value::Int(0)),
                ("rc_minor", Value::Int(0)),
                ("rc_cur_id", Value::Int(PAGE_ID)),
                ("rc_user", Value::Int(u.user)),
                ("rc_user_text", Value::text(USER_IP)),
                ("rc_comment", Value::text("comment")),
                ("rc_this_oldid", Value::Int(NEW_TEXT_ID)),
                ("rc_last_oldid", Value::Int(a.text_id)),
                ("rc_bot", Value::Int(0)),
                ("rc_moved_to_ns", Value::Int(0)),
                ("rc_moved_to_title", Value::text("")),
                ("rc_ip", Value::text(USER_IP)),
                ("rc_old_len", Value::Int(new_len)),
                ("rc_new_len", Value::Int(new_len)),
            ],
        );
        // MonkeyDB has no IS NULL: the client keeps the rows without a timestamp.
        t.watchlist
            .select(
                tx,
                Projection::Columns(&["wl_user", "wl_notificationtimestamp"]),
                &Pred::eq("wl_title", TITLE)
                    .and(Pred::eq("wl_namespace", NAMESPACE))
                    .and(Pred::cmp("wl_user", CmpOp::Ne, u.user)),
            )
            .iter()
            .filter(|r| r[1].is_null())
            .filter_map(|r| r[0].as_i64())
            .collect()
    }

    /// UpdatePage's last statements (in B, or in D after the watchers' transactions).
    fn update_page_log(&self, tx: &mut Tx<'_>, u: &Update) {
        let t = &self.t;
        t.logging.insert(
            tx,
            &[
                ("log_type", Value::text("patrol")),
                ("log_action", Value::text("patrol")),
                ("log_timestamp", Value::text(NOW)),
                ("log_user", Value::Int(u.user)),
                ("log_user_text", Value::text(USER_IP)),
                ("log_namespace", Value::Int(NAMESPACE)),
                ("log_title", Value::text(TITLE)),
                ("log_page", Value::Int(PAGE_ID)),
                ("log_comment", Value::text("")),
                (
                    "log_params",
                    Value::from(format!(
                        "{NEW_LATEST_REVISION}\n{}\n1",
                        u.article.revision_id
                    )),
                ),
            ],
        );
        t.useracct.update(
            tx,
            &[Assign::add("user_editcount", 1i64)],
            &Pred::eq("user_id", u.user),
        );
        self.touch_user(tx, u.user);
    }

    fn update_page(&mut self, step: u32, tx: &mut Tx<'_>) -> Step {
        match step {
            0 => {
                let user = self.generator().call_user(false);
                let Some(article) = self.get_page(tx, None) else {
                    return ROLLBACK;
                };
                self.update = Some(Update {
                    user,
                    article,
                    watchers: Vec::new(),
                });
                Step::Continue
            }
            1 => {
                let Some(mut u) = self.update.take() else {
                    return ROLLBACK;
                };
                self.generator().revision(u.article.text_id);
                u.watchers = self.update_page_edit(tx, &u);
                if u.watchers.is_empty() {
                    self.update_page_log(tx, &u);
                    COMMIT
                } else {
                    self.update = Some(u);
                    Step::Continue
                }
            }
            2 => {
                let Some(u) = self.update.as_ref() else {
                    return ROLLBACK;
                };
                for &w in &u.watchers {
                    self.t.watchlist.update(
                        tx,
                        &[Assign::set("wl_notificationtimestamp", NOW)],
                        &Pred::eq("wl_title", TITLE)
                            .and(Pred::eq("wl_namespace", NAMESPACE))
                            .and(Pred::eq("wl_user", w)),
                    );
                }
                Step::Continue
            }
            _ => {
                let Some(u) = self.update.take() else {
                    return ROLLBACK;
                };
                for &w in &u.watchers {
                    self.t
                        .useracct
                        .select(tx, Projection::All, &Pred::eq("user_id", w));
                }
                self.update_page_log(tx, &u);
                COMMIT
            }
        }
    }
}

impl Terminal for WikipediaTerminal {
    fn run(&mut self, procedure: usize, step: u32, tx: &mut Tx<'_>) -> Step {
        if procedure == UPDATE_PAGE {
            let result = self.update_page(step, tx);
            if let Some(u) = &self.update {
                self.parameters = format!("user_id={}", u.user);
            }
            return result;
        }
        let user = self.generator().call_user(procedure != GET_PAGE_ANONYMOUS);
        self.parameters = if procedure == GET_PAGE_ANONYMOUS {
            "anonymous".to_string()
        } else {
            format!("user_id={user}")
        };
        match procedure {
            ADD_WATCH_LIST => self.add_watch_list(tx, user),
            REMOVE_WATCH_LIST => self.remove_watch_list(tx, user),
            GET_PAGE_ANONYMOUS => match self.get_page(tx, None) {
                Some(_) => COMMIT,
                None => ROLLBACK,
            },
            _ => self.get_page_authenticated(tx, user),
        }
    }

    fn parameters(&self) -> Option<String> {
        Some(self.parameters.clone())
    }
}

/// `wikipedia_cr`'s A15–A17 on the final state.
fn invariants(t: &Tables, s: &mut Snapshot<'_>) -> Vec<InvariantCheck> {
    let edit_counts: Vec<(i64, i64)> = t
        .useracct
        .select(
            s,
            Projection::Columns(&["user_id", "user_editcount"]),
            &Pred::All,
        )
        .iter()
        .map(|r| (r[0].as_i64().unwrap_or(0), r[1].as_i64().unwrap_or(0)))
        .collect();
    let users_of = |table: &Table, column: &str, s: &mut Snapshot<'_>| -> Vec<i64> {
        table
            .select(s, Projection::Columns(&[column]), &Pred::All)
            .iter()
            .map(|r| r[0].as_i64().unwrap_or(0))
            .collect()
    };
    let rc_users = users_of(&t.recentchanges, "rc_user", s);
    let log_users = users_of(&t.logging, "log_user", s);
    let count = |users: &[i64], u: i64| users.iter().filter(|&&x| x == u).count() as i64;
    let over = |rows: &[i64], what: &str| -> Vec<String> {
        edit_counts
            .iter()
            .filter(|&&(u, edits)| edits > count(rows, u))
            .map(|&(u, edits)| {
                format!(
                    "user {u}: edit count {edits} but {} {what} rows",
                    count(rows, u)
                )
            })
            .collect()
    };
    let a15 = over(&rc_users, "recentchanges");
    let a16 = over(&log_users, "logging");
    let mut per_user: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for &u in &log_users {
        per_user.entry(u).or_default().0 += 1;
    }
    for &u in &rc_users {
        per_user.entry(u).or_default().1 += 1;
    }
    let a17: Vec<String> = per_user
        .iter()
        .filter(|(_, (log, rc))| log != rc)
        .map(|(u, (log, rc))| format!("user {u}: {log} logging rows but {rc} recentchanges rows"))
        .collect();
    let check = |id, description, failures: Vec<String>| InvariantCheck {
        id,
        description,
        holds: failures.is_empty(),
        detail: failures.join("; "),
    };
    vec![
        check(
            "A15",
            "no user's edit count exceeds their recentchanges rows",
            a15,
        ),
        check(
            "A16",
            "no user's edit count exceeds their logging rows",
            a16,
        ),
        check(
            "A17",
            "every user has as many logging rows as recentchanges rows",
            a17,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ReadPolicy, ScanMode, Store};
    use crate::workloads::{counts, Counts};

    /// Loads Wikipedia and runs `steps` as consecutive transactions of one terminal; the
    /// Table 3 counts of the run and the invariants after it. Every step must commit.
    #[allow(clippy::type_complexity)]
    fn run_txns(
        steps: Vec<Box<dyn FnOnce(&mut WikipediaTerminal, &mut Tx<'_>) -> Step + '_>>,
    ) -> (Counts, Vec<InvariantCheck>) {
        let mut store = Store::new(ReadPolicy::Latest).unwrap();
        // The costs are MonkeyDB's (full scans), as the specification counts them.
        store.set_scan_mode(ScanMode::Full);
        Wikipedia.load(&mut store.loader());
        let s = store.open_session(10);
        let mut term = WikipediaTerminal::new(Arc::default());
        for f in steps {
            let mut tx = store.begin(s);
            let step = f(&mut term, &mut tx);
            assert_ne!(step, ROLLBACK);
            tx.commit();
        }
        let c = counts(&store.history("wikipedia").unwrap());
        (c, Wikipedia.invariants(&mut store.snapshot()))
    }

    fn holds(inv: &[InvariantCheck]) -> Vec<bool> {
        inv.iter().map(|i| i.holds).collect()
    }

    #[test]
    fn procedures_cost_what_the_spec_says() {
        let gpa = |term: &mut WikipediaTerminal, tx: &mut Tx<'_>| {
            term.get_page(tx, None).map_or(ROLLBACK, |_| COMMIT)
        };
        let (c, _) = run_txns(vec![Box::new(gpa)]);
        assert_eq!((c.reads, c.writes), (115, 0));
        let (c, _) = run_txns(vec![Box::new(|term, tx| {
            term.get_page_authenticated(tx, 1)
        })]);
        assert_eq!((c.reads, c.writes), (137, 0));
        let (c, inv) = run_txns(vec![Box::new(|term, tx| term.add_watch_list(tx, 1))]);
        assert_eq!((c.reads, c.writes), (9, 12));
        assert_eq!(holds(&inv), [true; 3]);
        let (c, _) = run_txns(vec![Box::new(|term, tx| term.remove_watch_list(tx, 1))]);
        assert_eq!((c.reads, c.writes), (4, 1));
        // UpdatePage: A reads the page (115), B writes the edit (26 reads, 60 writes).
        let (c, inv) = run_txns(vec![
            Box::new(|term, tx| term.update_page(0, tx)),
            Box::new(|term, tx| term.update_page(1, tx)),
        ]);
        assert_eq!((c.reads, c.writes, c.txns), (115 + 26, 60, 2));
        assert_eq!(holds(&inv), [true; 3]);
        // Each edit adds a revision and a text: GetPageAnonymous then costs 15 + 2 more.
        let (c, _) = run_txns(vec![
            Box::new(|term, tx| term.update_page(0, tx)),
            Box::new(|term, tx| term.update_page(1, tx)),
            Box::new(gpa),
        ]);
        assert_eq!(c.reads, 115 + 26 + 132);
    }

    #[test]
    fn an_anonymous_edit_updates_no_account_and_a_watched_page_splits_the_edit() {
        let shared: Arc<Mutex<SharedGenerator>> = Arc::default();
        shared.lock().unwrap().after_revision_of_text_1 = true;
        let (c, inv) = run_txns(vec![
            Box::new(|term, tx| {
                term.shared = shared.clone();
                term.update_page(0, tx)
            }),
            Box::new(|term, tx| term.update_page(1, tx)),
        ]);
        assert_eq!((c.reads, c.writes), (115 + 25, 58));
        assert_eq!(holds(&inv), [true; 3]);
        // User 1 watches the page; an anonymous edit notifies them in C and logs in D.
        let (c, inv) = run_txns(vec![
            Box::new(|term, tx| term.add_watch_list(tx, 1)),
            Box::new(|term, tx| {
                term.shared = shared.clone();
                term.shared.lock().unwrap().after_revision_of_text_1 = true;
                term.update_page(0, tx)
            }),
            Box::new(|term, tx| term.update_page(1, tx)),
            Box::new(|term, tx| term.update_page(2, tx)),
            Box::new(|term, tx| term.update_page(3, tx)),
        ]);
        assert_eq!(c.txns, 5);
        assert_eq!(holds(&inv), [true; 3]);
    }

    #[test]
    fn invariants_catch_counts_without_their_rows() {
        let t = tables();
        let (_, inv) = run_txns(vec![Box::new(|_, tx| {
            t.useracct.update(
                tx,
                &[Assign::add("user_editcount", 1i64)],
                &Pred::eq("user_id", 1),
            );
            COMMIT
        })]);
        assert_eq!(holds(&inv), [false, false, true]);
        let (_, inv) = run_txns(vec![Box::new(|_, tx| {
            t.logging.insert(tx, &[("log_user", Value::Int(2))]);
            COMMIT
        })]);
        assert_eq!(holds(&inv), [true, true, false]);
    }

    #[test]
    fn only_an_update_after_an_edit_of_text_1_is_anonymous() {
        let mut g = SharedGenerator::default();
        assert_eq!(g.call_user(false), 1);
        g.revision(4);
        assert_eq!(g.call_user(false), 1);
        g.revision(1);
        // A call that needs a user redraws until it gets one.
        assert_eq!(g.call_user(true), 1);
        g.revision(1);
        assert_eq!(g.call_user(false), ANONYMOUS);
        assert_eq!(g.call_user(false), 1);
    }
}
