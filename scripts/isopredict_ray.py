"""Runs `isopredict rank` or `isopredict check` across a Ray cluster (docs/distributed.md).

The driver asks the isopredict binary for the plan (`rank ARGS --plan FILE`: one JSON line per
cell), ships every cell as a Ray task that runs `isopredict rank --cell N --plan FILE --out DIR`
on some machine and returns the cell's result file, writes the results into a private work
folder, and asks the binary to merge them (`rank --merge DIR --out OUT`). Everything that
decides a result is the binary's; this file only moves cells and files around, so the merged
rank.md equals what one-machine `isopredict rank` writes for the same grid.

Faults: a cell whose worker dies (the Ray worker process, or the isopredict process under it,
killed) is retried by Ray (--retries). A cell that fails inside isopredict (a bad history, a
timeout) is a row saying so, as on one machine. Interrupting the driver (Ctrl-C, SIGTERM)
cancels the job's tasks and removes the work folder; the output folder is written only by the
final merge, atomically, so it is either complete or untouched.
"""

import argparse
import hashlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
DEFAULT_VENV = os.path.join(
    os.path.expanduser("~"), ".cache", "isopredict", "ray-venv"
)


def ensure_ray():
    """Imports ray, re-executing under the project's virtual environment when needed."""
    try:
        import ray  # noqa: F401

        return
    except ImportError:
        pass
    venv = os.environ.get("ISOPREDICT_RAY_VENV", DEFAULT_VENV)
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(python) and os.path.realpath(sys.prefix) != os.path.realpath(venv):
        os.execv(python, [python] + sys.argv)
    sys.stderr.write(
        "error: ray is not installed: run scripts/ray-venv (creates %s with the pinned Ray "
        "of scripts/requirements-ray.txt), or set ISOPREDICT_RAY_VENV\n" % venv
    )
    sys.exit(EXIT_BAD_INPUT)


def find_binary(given):
    """The isopredict binary: --isopredict, PATH, or this checkout's target/release."""
    if given:
        return os.path.abspath(given)
    on_path = shutil.which("isopredict")
    if on_path:
        return on_path
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    built = os.path.join(here, "target", "release", "isopredict")
    if os.path.exists(built):
        return built
    sys.stderr.write(
        "error: no isopredict binary: put it on PATH, build it (cargo build --release) or "
        "pass --isopredict PATH\n"
    )
    sys.exit(EXIT_BAD_INPUT)


class CellProcessDied(Exception):
    """The isopredict process of a cell was killed by a signal: the cell is run again."""


def _private(path):
    """Whether `path` is a folder (not a link) of this user that no one else may enter."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.getuid()
        and stat.S_IMODE(st.st_mode) & 0o077 == 0
    )


def _cache_name():
    return "isopredict-ray-%d" % os.getuid()


def cache_dir():
    """The worker's cache of shipped binaries and plans: a folder of this user alone (mode
    0700, owned by this user, not a link) in the system temp dir, made once per machine. A
    folder already there under that name that is not such a folder (planted by another user,
    or loosened) is never used: the cell then gets a fresh private folder of its own."""
    path = os.path.join(tempfile.gettempdir(), _cache_name())
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return tempfile.mkdtemp(prefix=_cache_name() + "-")
    if _private(path):
        return path
    return tempfile.mkdtemp(prefix=_cache_name() + "-")


def _sha256_of_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cached_file(directory, name, data, executable):
    """directory/name holding exactly `data`: a regular file already there is used only when
    its SHA-256 is that of `data`, anything else is replaced (atomically)."""
    path = os.path.join(directory, name)
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid():
            if _sha256_of_file(path) == hashlib.sha256(data).hexdigest():
                return path
    except OSError:
        pass
    fd, tmp = tempfile.mkstemp(dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o700 if executable else 0o600)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
    return path


def cached_binary(directory, data):
    """The shipped isopredict binary in the cache, its hash checked before it is run."""
    return cached_file(directory, "isopredict-%s" % hashlib.sha256(data).hexdigest(), data, True)


def _die_with_parent():
    """In the isopredict child: die when the Ray worker running it dies (Linux)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def run_cell(command, plan_text, plan_id, index, binary, binary_data, cwd):
    """Runs cell `index` of the plan with the isopredict binary; returns the result file's
    text, or raises. Runs on a Ray worker."""
    cache = cache_dir()
    plan = cached_file(cache, "plan-%s.jsonl" % plan_id, plan_text.encode(), False)
    if binary_data is not None:
        binary = cached_binary(cache, binary_data)
    out = tempfile.mkdtemp(prefix="cell-", dir=cache)
    try:
        proc = subprocess.run(
            [binary, command, "--cell", str(index), "--plan", plan, "--out", out],
            cwd=cwd if os.path.isdir(cwd) else None,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=_die_with_parent,
        )
        if proc.returncode < 0:
            raise CellProcessDied(
                "cell %d: isopredict was killed by signal %d" % (index, -proc.returncode)
            )
        if proc.returncode != 0:
            raise RuntimeError(
                "cell %d: isopredict exited %d: %s"
                % (index, proc.returncode, proc.stderr.decode(errors="replace").strip())
            )
        with open(os.path.join(out, "cell-%06d.json" % index), encoding="utf-8") as f:
            return f.read()
    finally:
        shutil.rmtree(out, ignore_errors=True)
        if os.path.basename(cache) != _cache_name():
            shutil.rmtree(cache, ignore_errors=True)  # a one-cell folder (cache_dir)


class Progress:
    """cells done / total and failures on standard error: a line rewritten on a terminal,
    a line per tenth of the job otherwise."""

    def __init__(self, total):
        self.total = total
        self.done = 0
        self.failed = 0
        self.tty = sys.stderr.isatty()
        self.start = time.time()
        self.last_tenth = -1

    def update(self, final=False):
        text = "cells %d/%d done, %d failed, %.1f s" % (
            self.done,
            self.total,
            self.failed,
            time.time() - self.start,
        )
        if self.tty:
            sys.stderr.write("\r" + text + ("\n" if final else ""))
            sys.stderr.flush()
            return
        tenth = self.done * 10 // max(self.total, 1)
        if final or tenth != self.last_tenth:
            self.last_tenth = tenth
            sys.stderr.write(text + "\n")
            sys.stderr.flush()


def parse_args(command, argv):
    parser = argparse.ArgumentParser(
        prog="%s-on-ray" % command,
        description="isopredict %s across a Ray cluster: the arguments of `isopredict %s`, "
        "plus the options below (docs/distributed.md)." % (command, command),
        add_help=True,
    )
    parser.add_argument(
        "--address",
        help="the Ray cluster (ray://HOST:10001, HOST:6379 or auto) [default: start a "
        "local Ray instance on 127.0.0.1]",
    )
    parser.add_argument(
        "--num-cpus",
        type=int,
        help="CPUs of the local Ray instance [default: all of this machine's]",
    )
    parser.add_argument("--isopredict", help="the isopredict binary [default: PATH, then target/release]")
    parser.add_argument(
        "--ship-binary",
        choices=["auto", "yes", "no"],
        default="auto",
        help="send the binary to the workers through Ray's object store (auto: with --address)",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=3,
        help="times a cell whose worker dies is run again [default: 3]",
    )
    if command == "rank":
        parser.add_argument("--out", default="out/rank", help="output folder [default: out/rank]")
        parser.add_argument("--json", action="store_true", help="print rank.json instead of rank.md")
    return parser.parse_known_args(argv)


def auth_environment(address):
    """Ray's token authentication, set up before ray is imported (it reads the mode then)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if address:
        # A cluster started by `ray start` checks a token; a driver sends it in token mode.
        if os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH"):
            os.environ.setdefault("RAY_AUTH_MODE", "token")
        return
    # The local instance of this job: a token of its own, so that two local instances never
    # share ~/.ray/auth_token.
    if not os.environ.get("RAY_AUTH_TOKEN"):
        import secrets

        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(16)
    os.environ.setdefault("RAY_AUTH_MODE", "token")


def main(command, argv):
    args, rest = parse_args(command, argv)
    auth_environment(args.address)
    ensure_ray()
    import ray
    import ray.cloudpickle

    # The workers do not have this file: send its functions by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

    binary = find_binary(args.isopredict)
    work = tempfile.mkdtemp(prefix="isopredict-%s-on-ray-" % command)
    started_ray = False
    pending = []
    # Ctrl-C and SIGTERM set a flag. The exception is raised at once only outside Ray's own
    # calls (`raise_now`): a KeyboardInterrupt thrown into the middle of `ray.wait` or
    # `ray.init` can crash Ray's core worker, and the driver would then exit 1 instead of 130.
    # Inside Ray's calls the flag is looked at between calls (`ray.wait` returns every second).
    interrupted = {"signal": None, "raise_now": True}

    def on_signal(signum, _frame):
        interrupted["signal"] = signum
        if interrupted["raise_now"]:
            raise KeyboardInterrupt

    def stop_if_interrupted():
        if interrupted["signal"] is not None:
            raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        plan_file = os.path.join(work, "plan.jsonl")
        made = subprocess.run(
            [binary, command] + rest + ["--plan", plan_file], stderr=subprocess.PIPE
        )
        for line in made.stderr.decode(errors="replace").splitlines(True):
            if made.returncode != 0 or not line.startswith("wrote "):
                sys.stderr.write(line)  # notes (skipped entries) and errors
        if made.returncode != 0:
            return made.returncode
        with open(plan_file, encoding="utf-8") as f:
            plan_text = f.read()
        import json

        lines = [json.loads(line) for line in plan_text.splitlines() if line.strip()]
        total = len(lines)
        plan_id = hashlib.sha256(plan_text.encode()).hexdigest()[:16]

        stop_if_interrupted()
        interrupted["raise_now"] = False
        if args.address:
            ray.init(address=args.address, log_to_driver=False, logging_level="WARNING")
        else:
            ray.init(
                address="local",
                num_cpus=args.num_cpus,
                include_dashboard=False,
                log_to_driver=False,
                logging_level="WARNING",
                _node_ip_address="127.0.0.1",
            )
            started_ray = True
        ship = args.ship_binary == "yes" or (args.ship_binary == "auto" and args.address)
        binary_data = None
        if ship:
            with open(binary, "rb") as f:
                binary_data = ray.put(f.read())
        plan_ref = ray.put(plan_text)
        remote = ray.remote(num_cpus=1, max_retries=args.retries, retry_exceptions=[CellProcessDied])(
            run_cell
        )
        # Longest first (as on one machine); results are put back in plan order by the merge.
        order = sorted(range(total), key=lambda i: -int(lines[i].get("cost", 0)))
        cwd = os.getcwd()
        ref_cell = {}
        for i in order:
            ref = remote.remote(command, plan_ref, plan_id, i, binary, binary_data, cwd)
            ref_cell[ref] = i
            pending.append(ref)
        cells_dir = os.path.join(work, "cells")
        os.makedirs(cells_dir)
        progress = Progress(total)
        failures = []
        while pending:
            stop_if_interrupted()
            ready, pending = ray.wait(pending, num_returns=1, timeout=1.0)
            for ref in ready:
                i = ref_cell[ref]
                try:
                    text = ray.get(ref)
                except Exception as e:  # the cell failed after its retries
                    progress.failed += 1
                    failures.append("cell %d: %s" % (i, str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__))
                    continue
                tmp = os.path.join(cells_dir, ".cell-%06d.tmp" % i)
                with open(tmp, "w", encoding="utf-8") as f:
                    f.write(text)
                os.replace(tmp, os.path.join(cells_dir, "cell-%06d.json" % i))
                progress.done += 1
            if pending:
                progress.update()
        stop_if_interrupted()
        interrupted["raise_now"] = True
        progress.update(final=True)
        if failures:
            for f in failures[:20]:
                sys.stderr.write("error: %s\n" % f)
            sys.stderr.write(
                "error: %d of %d cells failed after %d retries; no output written\n"
                % (len(failures), total, args.retries)
            )
            return EXIT_BAD_INPUT
        if command == "rank":
            merge = [binary, "rank", "--merge", cells_dir, "--out", args.out]
            if args.json:
                merge.append("--json")
        else:
            merge = [binary, "check", "--merge", cells_dir]
        return subprocess.run(merge).returncode
    except BaseException as e:
        # A failure after the interrupt (Ray's worker shutting down under us) is the interrupt.
        if not isinstance(e, KeyboardInterrupt) and interrupted["signal"] is None:
            raise
        interrupted["raise_now"] = False
        for ref in pending:
            try:
                ray.cancel(ref, force=True)
            except Exception:
                pass
        sys.stderr.write("%s-on-ray: interrupted; the job is stopped and no output was written\n" % command)
        return EXIT_INTERRUPTED
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if started_ray or args.address:
            try:
                ray.shutdown()
            except Exception:
                pass
        if interrupted["signal"] is not None:
            # Leave now: Ray's exit hooks may still fail after an interrupted shutdown, and
            # the exit code of an interrupted job is 130 whatever they do.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(EXIT_INTERRUPTED)
