# Plain commands only: prerequisites come from scripts/setup.sh (idempotent);
# everything else is a bazel or cargo invocation inside the Debian sid build
# root (scripts/buildroot), where Bazel 7, ROCm 7.2 / clang 22 and Rust live.
BUILDROOT ?= scripts/buildroot
BAZEL ?= $(BUILDROOT) bazel
# clippy-driver compiles the workspace's own crates (cargo clippy makes it
# their rustc for a check build): the lints run inside the test build, and
# -D warnings fails it, so clippy and the tests share one compile. Every cargo
# command here runs so, or the shared target directory would hold a second
# build of everything.
CARGO ?= $(BUILDROOT) env RUSTC_WORKSPACE_WRAPPER=/usr/bin/clippy-driver RUSTFLAGS=-Dwarnings cargo
# cargo's target directory outside the checkout: clippy, the crates' tests and
# the dev binary do not test a cold build, so fresh clones share it.
CARGO_TARGET_DIR ?= $(HOME)/.cache/rules_rocm/cargo-target
CARGO_FLAGS ?= --manifest-path tools/Cargo.toml --locked --target-dir $(CARGO_TARGET_DIR)
# Bazel's disk cache for the builds that do not test a cold build: shared by
# `bazel test //...`, the e2e tests' own output bases and later runs (action
# keys do not depend on the checkout's path). Bounded in size, well above
# what all of `make test` writes (one cold //:wheels is 0.7 GB of outputs;
# the e2e tests' other flags, toolkits and output bases add to it): below
# that, an idle server's garbage collection can evict the clean build's
# donation, the oldest entries, before `bazel test //...` reads them.
DISK_CACHE ?= $(HOME)/.cache/rules_rocm/e2e-disk-cache
DISK_CACHE_MAX ?= 16G
# Every output fetched, not only the top-level ones (Bazel 7's default for
# any remote or disk cache): a later command in the same output base without
# the cache (`make wheels`) would otherwise find intermediate outputs that
# were never written and compile them again.
DISK_CACHE_FLAGS ?= --disk_cache=$(DISK_CACHE) --experimental_disk_cache_gc_max_size=$(DISK_CACHE_MAX) --remote_download_outputs=all
# Docstring Args:/Returns: sections are not required for internal helpers;
# WORKSPACE macros (register_toolchains) take no name.
BUILDIFIER_WARNINGS ?= -warnings=-function-docstring-args,-function-docstring-return,-unnamed-macro

.PHONY: setup wheels tool-wheels tool-wheels-test kpack-dists test rust-test fuzz-smoke real-wheel-test bazel-test workspace-test e2e e2e-clean-builds e2e-rest pip-sdk-test dist-test import-test jax-test kpack-test wheel-index-test remote-faults-test setup-test lint crates-lane faults-lane bazel-lane host-lane
ifdef LANE
# Inside the lanes `make test` runs side by side: made already by the make
# that started them, so that no lane runs setup beside another or waits on
# the Bazel server the other lane is using to build wheels.
setup wheels tool-wheels kpack-dists:
else
setup:
	scripts/setup.sh

wheels: setup
	$(BAZEL) build //:wheels
	$(BAZEL) run //:copy_wheels -- $(CURDIR)/dist

# rocm-wheel's own wheels (x86_64, aarch64): the project's release, not part
# of //:wheels; the tests that pip-install the tool take them from dist/.
tool-wheels: setup
	$(BAZEL) run //tools/release:copy_wheels -- $(CURDIR)/dist

# The kpack build of //:wheels (--config=kpack) for kpack-test. Python 3.12
# only, the one the test installs: per-Python configurations do not depend
# on the list, so nothing else is rebuilt. Both builds also write the host
# wheels as variant wheels (--//:wheel_variants). Then per-family device
# wheels, with the execution log the test reads, and per-sub-family ones.
kpack-dists: wheels tool-wheels
	$(BAZEL) run --config=kpack --//:python_versions=3.12 --//:wheel_variants //:copy_wheels -- $(CURDIR)/dist-kpack
	$(BAZEL) run --config=kpack --//:python_versions=3.12 --//:wheel_variants --//:device_wheel_level=family \
	  --execution_log_json_file=$(CURDIR)/bazel-kpack-family.exec.json //:copy_wheels -- $(CURDIR)/dist-kpack-family
	$(BAZEL) run --config=kpack --//:python_versions=3.12 --//:device_wheel_level=sub_family \
	  //:copy_wheels -- $(CURDIR)/dist-kpack-sub-family
endif

rust-test: setup
	$(CARGO) fmt --manifest-path tools/Cargo.toml --all -- --check
	$(CARGO) test $(CARGO_FLAGS) --workspace

# A short coverage-guided run of the kpack fuzz targets over their corpus
# (10 s each, FUZZ_JOBS at a time) on an unoptimised instrumented build (its
# own target directory): about 75 s cold, 25 s warm (tools/crates/kpack/fuzz);
# then the negative controls: a planted crash, timeout and oom must each fail.
FUZZ_JOBS ?= 2
fuzz-smoke: setup
	$(BUILDROOT) env FUZZ_PROFILE=smoke FUZZ_JOBS=$(FUZZ_JOBS) tools/crates/kpack/fuzz/run.sh 10
	$(BUILDROOT) env FUZZ_PROFILE=smoke tools/crates/kpack/fuzz/run.sh --controls

# The tool on PyPI's real JAX ROCm wheels (downloaded once, sha256-checked):
# they test no rule, only `rocm-wheel` (Bazel's, already built by e2e).
real-wheel-test: setup
	$(BUILDROOT) tests/real_wheels/thin_real_wheel_test.sh
	$(BUILDROOT) tests/real_wheels/repair_real_wheel_test.sh

bazel-test: setup
	$(BAZEL) test $(DISK_CACHE_FLAGS) //...

# WORKSPACE mode on the same Bazel, for WORKSPACE consumers (XLA, JAX): the
# rocm-wheel tool is a prebuilt binary there (rules/repositories.bzl); the
# dev-profile one `cargo test` builds (WORKSPACE mode is tested here, not the
# tool's speed): `--no-run` compiles nothing after rust-test, where `cargo
# build --bin` would build dependencies again without the tests' features.
# The examples' wheels: the JAX plugin example is bzlmod-only.
workspace-test: setup
	$(CARGO) test $(CARGO_FLAGS) --workspace --no-run
	$(BAZEL) build --enable_workspace --noenable_bzlmod --repo_env=ROCM_WHEEL=$(CARGO_TARGET_DIR)/debug/rocm-wheel //:example_wheels

# Tests that drive bazel themselves (aquery, execution logs, clean builds).
E2E_RUN = $(BUILDROOT) env RULES_ROCM_DISK_CACHE=$(DISK_CACHE) RULES_ROCM_DISK_CACHE_MAX=$(DISK_CACHE_MAX) tests/e2e/run_all.sh
CLEAN_BUILDS_TEST = tests/e2e/clean_builds_test.sh
PIP_SDK_TEST = tests/e2e/pip_sdk_test.sh
e2e: setup
	$(E2E_RUN)
# The same in three parts for `make test`: the clean builds, the pip SDK
# (a small build, in the lane whose Bazel server is free after
# `bazel test //...`), then the rest.
e2e-clean-builds: setup
	$(E2E_RUN) $(CLEAN_BUILDS_TEST)
pip-sdk-test: setup
	$(E2E_RUN) $(PIP_SDK_TEST)
e2e-rest: setup
	$(E2E_RUN) $(filter-out $(CLEAN_BUILDS_TEST) $(PIP_SDK_TEST),$(wildcard tests/e2e/*_test.sh))

# What `make wheels` leaves in dist/ (the README's main job), and that a
# second setup changes nothing.
dist-test: wheels
	$(BUILDROOT) tests/host/dist_test.sh $(CURDIR)/dist

# The wheels of `make wheels` installed with pip and imported on this host
# (glibc 2.36, no ROCm), outside the build root: ROCm found by RUNPATH alone.
import-test: wheels tool-wheels
	tests/host/import_test.sh $(CURDIR)/dist

# rocm-wheel's own wheels (make tool-wheels) as pip on this x86_64 host
# judges them: the aarch64 one refused for its platform, accepted for an
# aarch64 one.
tool-wheels-test: tool-wheels
	tests/host/tool_wheels_test.sh $(CURDIR)/dist

# The jax-rocm7-plugin wheel of `make wheels` pip-installed with JAX 0.10.2
# and PyPI's PJRT plugin, inside the build root (ROCm 7.2); needs PyPI.
jax-test: wheels
	$(BUILDROOT) examples/jax_rocm_plugin/jax_test.sh $(CURDIR)/dist

# The kpack build of //:wheels judged by rocm-kpack's own loader and bundle
# parser against the fat wheels of `make wheels`, on the host: host and
# device wheels pip-installed together by their extras from an index of the
# build (tests/host/kpack); variantlib judges the variant wheels; the
# per-family build's execution log shows that only wheels (and the host
# wheels' extras and variants) were written.
kpack-test: kpack-dists
	tests/host/kpack/reference_test.sh $(CURDIR)/dist $(CURDIR)/dist-kpack $(CURDIR)/dist-kpack-family $(CURDIR)/bazel-kpack-family.exec.json \
	  $(CURDIR)/dist-kpack-sub-family

# Remote builds under faults (BuildGrid on loopback: eviction, a cache gone
# or unreachable, restarts, corrupted blobs, a slow or dropping link; the
# executor restarted or unreachable): docs/rbe.md, "When the cache
# misbehaves". FAULTS picks some (default all, about 7 minutes, most of it
# waiting for Bazel's retries: `make test` runs them in a lane of their own
# beside two busy ones).
FAULTS ?= evicted gone unreachable restart corrupt-top corrupt-mid slow dropping rbe-restart rbe-unreachable
remote-faults-test: setup
	$(BUILDROOT) env FAULTS="$(FAULTS)" tests/e2e/remote/faults_test.sh

# The install the docs give for //:wheel_index, run as written (a 3.12
# venv; PyPI's jax-rocm7-pjrt by --find-links), in the build root.
wheel-index-test: kpack-dists
	$(BUILDROOT) tests/host/kpack/wheel_index_test.sh

setup-test: setup
	tests/host/setup_idempotent_test.sh

# Rust and Starlark functions over 80 lines need a "Long because" in their doc comment.
lint: setup
	node_modules/.bin/buildifier -mode=check -lint=warn $(BUILDIFIER_WARNINGS) -r .
	.venv/bin/python tools/fn_length.py
	.venv/bin/python tools/fn_length.py --starlark

# The lanes of `make test`. Beside the e2e tests after the clean builds: the
# crates' tests, then the short fuzz run on one core; and the fault tests,
# which mostly wait for Bazel's retries and so take little from the other
# two. Then Bazel's own tests, WORKSPACE mode, dist-test (it asks Bazel for
# the tool's path) and the pip SDK's small build beside the tests of what
# the builds left in dist/ (pip installs, PyPI downloads, Python), which
# need the Bazel server only for wheel-index-test's index (the kpack
# build's, already built) and real-wheel-test's tool path, last.
crates-lane: rust-test
	$(MAKE) fuzz-smoke FUZZ_JOBS=1 LANE=1
faults-lane:
	$(MAKE) remote-faults-test LANE=1
bazel-lane:
	$(MAKE) bazel-test tool-wheels-test workspace-test dist-test pip-sdk-test LANE=1
host-lane:
	$(MAKE) import-test jax-test kpack-test wheel-index-test real-wheel-test LANE=1

# The clean builds first and alone: they pay the cold //:wheels once and
# leave it (and the shared disk cache) to everything after them, and keep
# both cores busy (beside them, the crates' tests only took turns with them:
# bench/cold_wheels/README.md). The lanes after them fill the cores that
# servers, retries, pip installs and small builds leave idle.
test: lint
	$(MAKE) e2e-clean-builds
	$(MAKE) -j3 --output-sync=line crates-lane e2e-rest faults-lane
	$(MAKE) kpack-dists
	$(MAKE) -j2 --output-sync=line bazel-lane host-lane
	$(MAKE) setup-test
