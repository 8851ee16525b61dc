//! The threads that serve connections: each runs its own single-threaded event loop (a
//! tokio current-thread runtime), and each connection stays on the one that was least busy
//! when it was accepted. A client's message wakes the thread that waits on that client's
//! socket and no other — as a PostgreSQL backend waits on its own connection — whereas a
//! work-stealing pool lets one thread poll every socket and hand ready connections to the
//! others (a wake-up more per message, and messages that wait while the polling thread runs a
//! statement). The shared database is behind its own mutex ([`super::database`]), so the
//! threads need nothing else in common.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// Serving threads by default: one per core (at least two). Measured on two cores
/// (examples/server_bench.rs): one thread per connection (four) costs more CPU per
/// transaction than two — each message then wakes a sleeping thread, and more threads meet at
/// the database's mutex — and one thread alone falls behind when the machine is busy.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
}

struct Shard {
    handle: Handle,
    /// Connections open on this thread.
    busy: Arc<AtomicUsize>,
    /// Dropped to stop the thread.
    stop: oneshot::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

/// The serving threads (see the module documentation).
pub struct Shards {
    shards: Vec<Shard>,
}

impl Shards {
    /// Starts `threads` serving threads (at least one).
    pub fn start(threads: usize) -> std::io::Result<Shards> {
        let mut shards = Vec::with_capacity(threads.max(1));
        for i in 0..threads.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let handle = runtime.handle().clone();
            let (stop, stopped) = oneshot::channel::<()>();
            let thread = std::thread::Builder::new()
                .name(format!("isopredict-serve-{i}"))
                .spawn(move || {
                    let _ = runtime.block_on(stopped);
                })?;
            shards.push(Shard {
                handle,
                busy: Arc::new(AtomicUsize::new(0)),
                stop,
                thread,
            });
        }
        Ok(Shards { shards })
    }

    /// The runtime of the thread with the fewest open connections, and its counter of them
    /// (the caller counts the connection it places there).
    pub fn least_busy(&self) -> (&Handle, Arc<AtomicUsize>) {
        let shard = self
            .shards
            .iter()
            .min_by_key(|s| s.busy.load(Ordering::SeqCst))
            .expect("at least one serving thread");
        (&shard.handle, shard.busy.clone())
    }

    /// Stops the threads (their connections must have ended) and waits for them.
    pub fn stop(self) {
        for shard in self.shards {
            drop(shard.stop);
            let _ = shard.thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_go_to_the_least_busy_thread() {
        let shards = Shards::start(3).unwrap();
        let mut placed = Vec::new();
        for _ in 0..6 {
            let (handle, busy) = shards.least_busy();
            busy.fetch_add(1, Ordering::SeqCst);
            placed.push((handle.id(), busy));
        }
        // Two on each thread.
        let ids: std::collections::HashSet<_> = placed.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids.len(), 3);
        assert!(placed
            .iter()
            .all(|(_, busy)| busy.load(Ordering::SeqCst) == 2));
        // A thread whose connections closed gets the next one.
        placed[0].1.fetch_sub(2, Ordering::SeqCst);
        assert_eq!(shards.least_busy().0.id(), placed[0].0);
        shards.stop();
    }
}
