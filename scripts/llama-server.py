"""llama.cpp's llama-server from the prebuilt xllamacpp wheel, taking the llama-server arguments
that scripts/local-llm.ts passes (serverArgs), and no others: an argument it does not know is an
error rather than silently ignored. xllamacpp runs llama.cpp's own HTTP server (the same routes,
/health, /props, /slots, /tokenize, /v1/chat/completions, and the same refusal of `tools` without
--jinja) inside this process; this script only fills its parameters and waits for a signal.

  PYTHONPATH=.tools/xllamacpp-<version>/lib python3 scripts/llama-server.py -m model.gguf --port 8088 ...
"""

import argparse
import signal
import sys


# ggml's names for the instruction sets it was compiled for (get_system_info) and /proc/cpuinfo's.
CPU_FLAGS = {
    "SSE3": "pni",
    "SSSE3": "ssse3",
    "AVX": "avx",
    "AVX2": "avx2",
    "AVX_VNNI": "avx_vnni",
    "F16C": "f16c",
    "FMA": "fma",
    "BMI2": "bmi2",
    "AVX512": "avx512f",
    "AVX512_VBMI": "avx512vbmi",
    "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16",
    "AMX_INT8": "amx_int8",
}


def missing_cpu_features(system_info):
    """The instruction sets the native library was built for that this CPU lacks. Importing it does
    not execute them, so without this check such a CPU would only fail (SIGILL) on the first
    request."""
    built = [k for k, v in (f.split("=") for f in system_info.split("|") if "=" in f) if v.strip() == "1"]
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return []
    names = [k.strip().split(":")[-1].strip() for k in built]
    return [n for n in names if n in CPU_FLAGS and CPU_FLAGS[n] not in flags]


def parse(argv):
    p = argparse.ArgumentParser(prog="llama-server.py", allow_abbrev=False)
    p.add_argument("--version", action="store_true")
    p.add_argument("-m", "--model")
    p.add_argument("--alias")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("-c", "--ctx-size", type=int, default=0)
    p.add_argument("-np", "--parallel", type=int, default=1)
    p.add_argument("-t", "--threads", type=int, default=-1)
    p.add_argument("-tb", "--threads-batch", type=int, default=-1)
    p.add_argument("-kvu", "--kv-unified", action="store_true")
    p.add_argument("--cache-reuse", type=int, default=0)
    p.add_argument("--no-webui", action="store_true")
    jinja = p.add_mutually_exclusive_group()
    jinja.add_argument("--jinja", dest="jinja", action="store_true", default=True)
    jinja.add_argument("--no-jinja", dest="jinja", action="store_false")
    return p.parse_args(argv)


def main(argv):
    args = parse(argv)
    import xllamacpp as xlc  # after parsing: --help needs no wheel

    if args.version:
        # What `llama-server --version` is for here: the native library loads and suits this CPU.
        info = xlc.get_system_info()
        print(f"xllamacpp {xlc.__version__}\n{info}")
        missing = missing_cpu_features(info)
        if missing:
            print(f"this CPU lacks {', '.join(missing)}, which this build needs", file=sys.stderr)
            return 3
        return 0
    if not args.model:
        print("llama-server.py: -m MODEL is required", file=sys.stderr)
        return 2

    params = xlc.CommonParams()
    params.model.path = args.model
    if args.alias:
        params.model_alias = {args.alias}
    params.hostnames = [args.host]
    params.port = args.port
    params.n_ctx = args.ctx_size
    params.n_parallel = args.parallel
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads_batch if args.threads_batch > 0 else args.threads
    params.kv_unified = args.kv_unified
    params.n_cache_reuse = args.cache_reuse
    params.ui = not args.no_webui
    params.use_jinja = args.jinja

    # SIGTERM and SIGINT end the process at once, even while the model loads (Python's own handlers
    # would wait for the native call to return): the server keeps nothing that needs saving.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    # Loads the model and starts the HTTP server on its own threads; /health answers once loaded.
    server = xlc.Server(params)
    print(f"llama-server.py: listening on {server.listening_address}", file=sys.stderr, flush=True)
    while True:
        signal.pause()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
