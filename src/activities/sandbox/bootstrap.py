# Runs inside the sandbox container as its main process. Reads {code, files, timeout, caps} as
# JSON on stdin, writes the files and the code to /work, runs the code as a child process with
# pipes it reads and caps itself, then prints one JSON result on stdout: exit code, capped
# stdout/stderr, and the regular files the code left in /output (symlinks and special files are
# rejected, counts and sizes capped). The worker re-checks everything it receives.
import base64, json, os, shutil, signal, stat, subprocess, sys, threading, time

# Matplotlib's font list, built into the image: copied to its (tmpfs) config dir so a plot does not
# spend its time limit rebuilding it.
FONT_CACHE = "/usr/local/share/sandbox/mpl"
if os.environ.get("MPLCONFIGDIR") and os.path.isdir(FONT_CACHE):
    shutil.copytree(FONT_CACHE, os.environ["MPLCONFIGDIR"], dirs_exist_ok=True)

bundle = json.loads(sys.stdin.buffer.read())
caps = bundle["caps"]
os.makedirs("/work", exist_ok=True)
for f in bundle.get("files", []):
    name = os.path.basename(f["name"])
    with open(os.path.join("/work", name), "wb") as fh:
        fh.write(base64.b64decode(f["b64"]))
with open("/work/main.py", "w", encoding="utf-8") as fh:
    fh.write(bundle["code"])

def reader(pipe, box):
    kept = bytearray()
    total = 0
    while True:
        chunk = pipe.read(65536)
        if not chunk:
            break
        total += len(chunk)
        room = caps["output"] - len(kept)
        if room > 0:
            kept += chunk[:room]
    box["data"] = kept.decode("utf-8", "replace")
    box["bytes"] = total

out, err = {}, {}
started = time.time()
timed_out = False
# The readers' threads start before the code does: a fork bomb takes every process slot the
# container has, and a thread started after it could not start (on a loaded machine the run then
# ended without a result, "crashed", instead of reporting the bomb).
out_r, out_w = os.pipe()
err_r, err_w = os.pipe()
threads = [threading.Thread(target=reader, args=(os.fdopen(out_r, "rb", buffering=0), out)), threading.Thread(target=reader, args=(os.fdopen(err_r, "rb", buffering=0), err))]
for t in threads:
    t.start()
try:
    proc = subprocess.Popen([sys.executable, "/work/main.py"], cwd="/work", stdout=out_w, stderr=err_w, stdin=subprocess.DEVNULL, start_new_session=True)
finally:
    # Only the code holds the write ends now: the readers see the end when it (and its children) end.
    os.close(out_w)
    os.close(err_w)
try:
    code = proc.wait(timeout=bundle["timeout"])
except subprocess.TimeoutExpired:
    timed_out = True
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    code = proc.wait()
# The code's children may still hold the pipes: kill the whole group before joining the readers.
try:
    os.killpg(proc.pid, signal.SIGKILL)
except ProcessLookupError:
    pass
for t in threads:
    t.join(5)

artifacts, rejected = [], []
total = 0
for root, dirs, names in os.walk("/output", followlinks=False):
    for d in list(dirs):
        if os.path.islink(os.path.join(root, d)):
            rejected.append({"name": os.path.relpath(os.path.join(root, d), "/output"), "reason": "symlink"})
            dirs.remove(d)
    for n in sorted(names):
        path = os.path.join(root, n)
        rel = os.path.relpath(path, "/output")
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            rejected.append({"name": rel, "reason": "symlink"})
        elif not stat.S_ISREG(st.st_mode):
            rejected.append({"name": rel, "reason": "not a regular file"})
        elif len(artifacts) >= caps["files"]:
            rejected.append({"name": rel, "reason": "too many files (at most %d)" % caps["files"]})
        elif st.st_size > caps["fileBytes"]:
            rejected.append({"name": rel, "reason": "larger than %d bytes" % caps["fileBytes"]})
        elif total + st.st_size > caps["totalBytes"]:
            rejected.append({"name": rel, "reason": "artifacts larger than %d bytes in all" % caps["totalBytes"]})
        else:
            with open(path, "rb") as fh:
                data = fh.read(caps["fileBytes"] + 1)
            total += len(data)
            artifacts.append({"name": rel, "b64": base64.b64encode(data).decode("ascii")})
if len(rejected) > 50:
    rejected = rejected[:50] + [{"name": "...", "reason": "%d more rejected" % (len(rejected) - 50)}]

sys.stdout.write(json.dumps({
    "exitCode": code,
    "timedOut": timed_out,
    "durationMs": int((time.time() - started) * 1000),
    "stdout": out.get("data", ""), "stdoutBytes": out.get("bytes", 0),
    "stderr": err.get("data", ""), "stderrBytes": err.get("bytes", 0),
    "artifacts": artifacts, "rejected": rejected,
}))
sys.stdout.flush()
