//! The threads that serve connections: each runs its own single-threaded event loop (a
//! tokio current-thread runtime), and each connection stays on the one that was least busy
//! when it was accepted. A client's message wakes the thread that waits on that client's
//! socket and no other — as a PostgreSQL backend waits on its own connection — whereas a
//! work-stealing pool lets one thread poll every socket and hand ready connections to the
//! others (a wake-up more per message, and messages that wait while the polling thread runs a
//! statement). The shared database is behind its own mutex ([`super::database`]), so the
//! threads need nothing else in common.
//!
//! Each thread is pinned to a core of its own (thread `i` to the `i`-th CPU the process may run
//! on, round robin when there are more threads than CPUs), so the connections spread over the
//! cores. Unpinned, the kernel's wake-up placement (a woken thread goes to the waker's core or
//! stays on its last one) piled both serving threads onto one core in 15 of 16 pgbench slices
//! measured with `perf sched` (examples/server_bench.rs, 2 cores shared with compilers): the
//! server then ran on one core while PostgreSQL's four backends ran on both, and its tps
//! depended on which core the client happened to share with it (docs/recording.md,
//! "Throughput and memory").

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
        let cpus = allowed_cpus();
        for i in 0..threads.max(1) {
            let cpu = (!cpus.is_empty()).then(|| cpus[i % cpus.len()]);
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let handle = runtime.handle().clone();
            let (stop, stopped) = oneshot::channel::<()>();
            let thread = std::thread::Builder::new()
                .name(format!("isopredict-serve-{i}"))
                .spawn(move || {
                    if let Some(cpu) = cpu {
                        // A thread left unpinned (an error) still serves.
                        pin_current_thread(cpu);
                    }
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

/// The CPUs this thread may run on (its affinity mask), in order; empty when unknown.
#[cfg(target_os = "linux")]
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is an empty set; sched_getaffinity writes at most its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: cpu is below CPU_SETSIZE, the set's capacity.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// The CPUs this thread may run on: unknown outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn allowed_cpus() -> Vec<usize> {
    Vec::new()
}

/// Pins the calling thread to `cpu`; `false` if the system refused.
#[cfg(target_os = "linux")]
fn pin_current_thread(cpu: usize) -> bool {
    if cpu >= libc::CPU_SETSIZE as usize {
        return false;
    }
    // SAFETY: a zeroed cpu_set_t is an empty set; cpu is below its capacity; sched_setaffinity
    // reads the set of the size given.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Pinning is not done outside Linux.
#[cfg(not(target_os = "linux"))]
fn pin_current_thread(_cpu: usize) -> bool {
    false
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

    #[test]
    fn each_serving_thread_is_pinned_to_a_core_of_its_own() {
        let cpus = allowed_cpus();
        if cpus.is_empty() {
            return; // not Linux: nothing is pinned
        }
        let n = cpus.len().min(4);
        let shards = Shards::start(n).unwrap();
        let mut seen = Vec::new();
        for shard in &shards.shards {
            let (tx, rx) = std::sync::mpsc::channel();
            shard.handle.spawn(async move {
                let _ = tx.send(allowed_cpus());
            });
            seen.push(rx.recv().unwrap());
        }
        shards.stop();
        // Thread i runs on the i-th allowed CPU and nowhere else.
        let expected: Vec<Vec<usize>> = cpus[..n].iter().map(|&c| vec![c]).collect();
        assert_eq!(seen, expected);
    }
}
