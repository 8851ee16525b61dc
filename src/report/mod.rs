//! Reports for people: drawings of an anomaly (DOT and SVG), the evaluation tables of
//! IsoPredict (PLDI'24 §7, Tables 4–7) as Markdown, the risk ranking and its chart.
//!
//! - [`anomaly`]: [`AnomalyGraph`] (sessions as columns, transactions as boxes, changed reads
//!   and the cycle highlighted) → [`AnomalyGraph::to_dot`], [`AnomalyGraph::to_svg`].
//! - [`tables`]: per-task records → Tables 4/5 ([`tables::prediction_rows`]), Tables 6/7
//!   ([`tables::exploration_rows`]), the risk ranking ([`tables::risk_rows`]), Markdown.
//! - [`chart`]: the ranking as an SVG bar chart.

pub mod anomaly;
mod anomaly_svg;
pub mod chart;
pub mod run_report;
pub mod tables;

pub use anomaly::{AnomalyGraph, EdgeKind, GraphEdge, SessionColumn, TxnBox};
