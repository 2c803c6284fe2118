# Plain commands only: prerequisites come from scripts/setup.sh (idempotent);
# everything else is a bazel or cargo invocation inside the Debian sid build
# root (scripts/buildroot), where Bazel 7, HIP 6.4 / clang 21 and Rust live.
BUILDROOT ?= scripts/buildroot
BAZEL ?= $(BUILDROOT) bazel
CARGO ?= $(BUILDROOT) cargo
CARGO_FLAGS ?= --manifest-path tools/Cargo.toml --locked
# One cargo target dir for every output base of this checkout (e2e tests use
# fresh output bases); see rules/private/cargo_repository.bzl.
export ROCM_WHEEL_CARGO_TARGET_DIR ?= $(CURDIR)/tools/target/bazel-cargo
# Docstring Args:/Returns: sections are not required for internal helpers;
# WORKSPACE macros (register_toolchains) take no name.
BUILDIFIER_WARNINGS ?= -warnings=-function-docstring-args,-function-docstring-return,-unnamed-macro

.PHONY: setup wheels test rust-test bazel-test workspace-test e2e dist-test setup-test lint
setup:
	scripts/setup.sh

wheels: setup
	$(BAZEL) build //:wheels
	$(BAZEL) run //:copy_wheels -- $(CURDIR)/dist

rust-test: setup
	$(CARGO) fmt --manifest-path tools/Cargo.toml --all -- --check
	$(CARGO) clippy $(CARGO_FLAGS) --workspace --all-targets -- -D warnings
	$(CARGO) test $(CARGO_FLAGS) --workspace

bazel-test: setup
	$(BAZEL) test //...

# WORKSPACE mode on the same Bazel, for WORKSPACE consumers (XLA, JAX).
workspace-test: setup
	$(BAZEL) build --enable_workspace --noenable_bzlmod //:wheels

# Tests that drive bazel themselves (aquery, execution logs, clean builds).
e2e: setup
	$(BUILDROOT) tests/e2e/run_all.sh

# What `make wheels` leaves in dist/ (the README's main job), and that a
# second setup changes nothing.
dist-test: wheels
	$(BUILDROOT) tests/host/dist_test.sh $(CURDIR)/dist

setup-test: setup
	tests/host/setup_idempotent_test.sh

lint: setup
	node_modules/.bin/buildifier -mode=check -lint=warn $(BUILDIFIER_WARNINGS) -r .

test: lint rust-test bazel-test workspace-test e2e dist-test setup-test
