//! The threads that serve connections, and where they run. Each serving thread runs its own
//! single-threaded event loop (a tokio current-thread runtime); a connection stays on the thread
//! it was placed on. A new connection gets a thread of its own — an idle one, or a new one —
//! until `max_threads` are serving, after which it shares the least busy; threads whose
//! connections closed wait for the next. A client's message wakes only the thread that waits
//! on that client's socket, as a PostgreSQL backend waits on its own connection.
//!
//! **Following the client.** A request–answer protocol runs best when the client's thread and
//! the thread that answers it share a core: each hands the core to the other, and no wake-up
//! crosses to the other core (on a virtual machine every such wake-up is an interrupt through
//! the hypervisor). The kernel pairs a PostgreSQL backend with its client by itself; it did not
//! pair unpinned serving threads, one per connection, with theirs — `perf sched` on two cores,
//! pgbench `-j 4 -c 4` over loopback TCP: half of all wake-ups crossed cores through serve (0.2%
//! through PostgreSQL), and serve ran at 17,700–19,500 tps where PostgreSQL ran at 27,000. So a
//! thread serving a single TCP connection moves itself to the core its client's packets come
//! from (`SO_INCOMING_CPU`, the core that ran the client's send) at the connection's first
//! message and every [`FOLLOW_EVERY`] messages after it; then 1% of wake-ups crossed, and serve
//! ran at 26,900–27,400 tps in the same test (PostgreSQL 26,900–27,200). The threads this
//! replaced, two pinned one per core and each serving two connections, crossed less (2–9% of
//! wake-ups) but their slices swung between 14,000 and 29,000 tps (docs/recording.md,
//! "Throughput and memory"). A thread serving several connections, or a Unix-domain socket's
//! (which does not tell the core), runs wherever the kernel puts it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// The most serving threads by default; connections beyond as many share them.
pub const DEFAULT_MAX_THREADS: usize = 64;

/// A thread serving one TCP connection looks where its client runs at the connection's first
/// message and every this many messages after it.
pub const FOLLOW_EVERY: u32 = 64;

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
    max_threads: usize,
    /// The cores the process may run on: where a thread that stops following its client may
    /// run again.
    allowed: Arc<[usize]>,
}

impl Shards {
    /// No serving thread yet; at most `max_threads` (at least one) are started as connections
    /// come.
    pub fn new(max_threads: usize) -> Shards {
        Shards {
            shards: Vec::new(),
            max_threads: max_threads.max(1),
            allowed: allowed_cpus().into(),
        }
    }

    fn spawn(&mut self) -> std::io::Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(format!("isopredict-serve-{}", self.shards.len()))
            .spawn(move || {
                let _ = runtime.block_on(stopped);
            })?;
        self.shards.push(Shard {
            handle,
            busy: Arc::new(AtomicUsize::new(0)),
            stop,
            thread,
        });
        Ok(())
    }

    /// The thread for a new connection: an idle one, else a new one while fewer than
    /// `max_threads` run, else the one with the fewest connections. The connection counts on
    /// it until its [`Placement`] is dropped.
    pub fn place(&mut self) -> std::io::Result<(Handle, Placement)> {
        let idle = self
            .shards
            .iter()
            .position(|s| s.busy.load(Ordering::SeqCst) == 0);
        let index = match idle {
            Some(i) => i,
            None if self.shards.len() < self.max_threads => match self.spawn() {
                Ok(()) => self.shards.len() - 1,
                // No thread to be had (a limit of the system): share one, if any runs.
                Err(e) if self.shards.is_empty() => return Err(e),
                Err(_) => self.least_busy(),
            },
            None => self.least_busy(),
        };
        let shard = &self.shards[index];
        shard.busy.fetch_add(1, Ordering::SeqCst);
        Ok((
            shard.handle.clone(),
            Placement {
                busy: shard.busy.clone(),
                allowed: self.allowed.clone(),
                messages: 0,
            },
        ))
    }

    fn least_busy(&self) -> usize {
        (0..self.shards.len())
            .min_by_key(|&i| self.shards[i].busy.load(Ordering::SeqCst))
            .unwrap_or(0)
    }

    /// Serving threads started so far.
    pub fn threads(&self) -> usize {
        self.shards.len()
    }

    /// Stops the threads (their connections must have ended) and waits for them.
    pub fn stop(self) {
        for shard in self.shards {
            drop(shard.stop);
            let _ = shard.thread.join();
        }
    }
}

/// A connection's place on its serving thread. The connection loop calls
/// [`Placement::after_message`] on the serving thread after each client message; dropping the
/// placement counts the connection off its thread.
pub struct Placement {
    busy: Arc<AtomicUsize>,
    allowed: Arc<[usize]>,
    /// Client messages so far.
    messages: u32,
}

impl Placement {
    /// At the connection's first message and every [`FOLLOW_EVERY`] after it: a thread that
    /// serves only this connection moves to the core the client's packets come from; a thread
    /// that serves others too may run on any core again (see the module documentation).
    pub fn after_message(&mut self, socket: std::os::fd::RawFd) {
        self.messages = self.messages.wrapping_add(1);
        if self.messages % FOLLOW_EVERY != 1 {
            return;
        }
        if self.busy.load(Ordering::SeqCst) == 1 {
            if let Some(cpu) = incoming_cpu(socket) {
                if self.allowed.contains(&cpu) {
                    set_current_thread_cpus(&[cpu]);
                }
            }
        } else {
            set_current_thread_cpus(&self.allowed);
        }
    }
}

impl Drop for Placement {
    fn drop(&mut self) {
        self.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The core that last processed packets arriving on `socket` (`SO_INCOMING_CPU`): for a
/// loopback TCP connection, the core its client's send ran on. `None` for a socket that does
/// not tell (a Unix-domain socket's, before any packet, outside Linux).
#[cfg(target_os = "linux")]
fn incoming_cpu(socket: std::os::fd::RawFd) -> Option<usize> {
    let mut cpu: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cpu`, an int of that size.
    let found = unsafe {
        libc::getsockopt(
            socket,
            libc::SOL_SOCKET,
            libc::SO_INCOMING_CPU,
            (&mut cpu as *mut libc::c_int).cast(),
            &mut len,
        )
    } == 0;
    (found && cpu >= 0).then_some(cpu as usize)
}

/// Which core a socket's packets arrive on: unknown outside Linux.
#[cfg(not(target_os = "linux"))]
fn incoming_cpu(_socket: std::os::fd::RawFd) -> Option<usize> {
    None
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

/// Lets the calling thread run on `cpus` only; `false` if the system refused (the thread then
/// runs where it ran).
#[cfg(target_os = "linux")]
fn set_current_thread_cpus(cpus: &[usize]) -> bool {
    if cpus.is_empty() || cpus.iter().any(|&c| c >= libc::CPU_SETSIZE as usize) {
        return false;
    }
    // SAFETY: a zeroed cpu_set_t is an empty set; every cpu is below its capacity;
    // sched_setaffinity reads the set of the size given.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Where a thread runs is left to the system outside Linux.
#[cfg(not(target_os = "linux"))]
fn set_current_thread_cpus(_cpus: &[usize]) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cores `handle`'s thread may run on after `placement` saw a message on `fd` there;
    /// the placement is handed back (dropping it would count its connection off).
    fn cores_after(handle: &Handle, mut placement: Placement, fd: i32) -> (Vec<usize>, Placement) {
        let (tx, rx) = std::sync::mpsc::channel();
        handle.spawn(async move {
            placement.after_message(fd);
            let _ = tx.send((allowed_cpus(), placement));
        });
        rx.recv().unwrap()
    }

    #[test]
    fn each_connection_gets_a_thread_of_its_own_until_the_limit() {
        let mut shards = Shards::new(2);
        assert_eq!(shards.threads(), 0);
        let (first, a) = shards.place().unwrap();
        let (second, b) = shards.place().unwrap();
        assert_eq!(shards.threads(), 2);
        assert_ne!(first.id(), second.id());
        // The limit reached, a third connection shares a thread.
        let (third, c) = shards.place().unwrap();
        assert_eq!(shards.threads(), 2);
        assert!(third.id() == first.id() || third.id() == second.id());
        // A thread whose connection closed takes the next one, and no thread is added.
        let idle = if third.id() == first.id() {
            drop(b);
            second.id()
        } else {
            drop(a);
            first.id()
        };
        let (fourth, _d) = shards.place().unwrap();
        assert_eq!(fourth.id(), idle);
        drop(c);
        shards.stop();
    }

    #[test]
    fn a_thread_serving_one_tcp_connection_moves_to_its_clients_core() {
        let cpus = allowed_cpus();
        if cpus.len() < 2 {
            return; // one core, or not Linux: nowhere to move
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let client_core = cpus[cpus.len() - 1];
        // The client sends from a thread on one core only.
        let client = std::thread::spawn(move || {
            assert!(set_current_thread_cpus(&[client_core]));
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            std::io::Write::write_all(&mut s, b"hello").unwrap();
            s
        });
        let (server_side, _) = listener.accept().unwrap();
        let _client = client.join().unwrap();
        let mut buf = [0u8; 5];
        std::io::Read::read_exact(&mut &server_side, &mut buf).unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&server_side);

        let mut shards = Shards::new(1);
        let (handle, only) = shards.place().unwrap();
        let (after_one, _only) = cores_after(&handle, only, fd);
        assert_eq!(after_one, vec![client_core]);
        // A second connection on the same thread: it may run anywhere again.
        let (_, shared) = shards.place().unwrap();
        let (after_two, _shared) = cores_after(&handle, shared, fd);
        assert_eq!(after_two, cpus);
        drop((_only, _shared));
        shards.stop();
    }
}
