# Sourced by the scripts that declare a second ROCm toolkit (tests/e2e/
# toolkits_test.sh, bench/toolkits/run.sh). Needs common.sh.

# serve_therock_fixture DIR: the TheRock-layout tarball of Debian's ROCm
# 6.4.3 / clang 21 (tests/e2e/fixtures/toolkits/therock_fixture.sh, built once and
# cached) served from DIR on 127.0.0.1. Sets therock_url, therock_sha and
# therock_server (the server's pid: kill it when done).
serve_therock_fixture() {
  local dir=$1 tarball name port
  tarball=$(bash "$root/tests/e2e/fixtures/toolkits/therock_fixture.sh" | tail -1)
  [[ -f $tarball && -f $tarball.sha256 ]] || fail "therock_fixture.sh made no tarball + .sha256 ($tarball)"
  therock_sha=$(cut -d' ' -f1 "$tarball.sha256")
  name=$(basename "$tarball")
  mkdir -p "$dir"
  ln -sf "$tarball" "$dir/$name"
  read -r therock_server port <<<"$(serve_directory "$dir" "$dir.http.log")"
  therock_url="http://127.0.0.1:$port/$name"
}

# declare_therock_toolkit: appends to the scratch module's MODULE.bazel the
# served tarball as toolkit `therock_6_4`, through the extension proxy
# `rocm` (more rocm.toolkit(...) may follow).
declare_therock_toolkit() {
  fixture therock_toolkit/MODULE.bazel.in SHA256="$therock_sha" URL="$therock_url" >>MODULE.bazel
}
