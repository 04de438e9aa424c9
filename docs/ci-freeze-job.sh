#!/bin/sh
# A CI job that freezes a flaky test, the only way one is ever excused.
#
#   sh docs/ci-freeze-job.sh TEST_ID [-- COMMAND ARGS...]
#
# TEST_ID is what the failing job reported; COMMAND runs that one test (default:
# python -m pytest -x -q TEST_ID). The job runs on any CI: it reads no CI-specific
# variable without a fallback, and it works on a repository whose server has no
# lock notes yet (then `freeze add` says so and nothing is frozen).
#
# It runs as the CI identity listed in [identities].ledger_writers, with credentials
# that let that identity push to the protected branch. Settings, all optional:
#   FREEZE_REMOTE  (origin)         FREEZE_BRANCH  (main)
#   FREEZE_WRITER  (ci-bot)         the ledger writer recorded in the entry
#   FREEZE_RUNS    (20)             runs for each seed
#   FREEZE_SEEDS   (5)              seeds (EVIDENCE_SEED, PYTHONHASHSEED) to try
#   FREEZE_LEDGER  (tests/freeze.jsonl, as [ledger].path)
#   FREEZE_NOTES   (refs/notes/evidence, as [lock].notes_ref)
#   FREEZE_JOB_URL (the CI job's address when the CI exports one)
set -eu

if [ "$#" -lt 1 ]; then
  echo "usage: $0 TEST_ID [-- COMMAND ARGS...]" >&2
  exit 2
fi
TEST_ID=$1
shift
if [ "${1:-}" = "--" ]; then
  shift
fi
if [ "$#" -eq 0 ]; then
  set -- python -m pytest -x -q "$TEST_ID"
fi

REMOTE=${FREEZE_REMOTE:-origin}
BRANCH=${FREEZE_BRANCH:-main}
WRITER=${FREEZE_WRITER:-ci-bot}
RUNS=${FREEZE_RUNS:-20}
SEEDS=${FREEZE_SEEDS:-5}
LEDGER=${FREEZE_LEDGER:-tests/freeze.jsonl}
NOTES=${FREEZE_NOTES:-refs/notes/evidence}
cd "$(git rev-parse --show-toplevel)"

# Where the run can be read: GitLab exports CI_JOB_URL, GitHub Actions the parts of
# its run address. Any other CI: set FREEZE_JOB_URL, or the reason names none.
JOB=${FREEZE_JOB_URL:-${CI_JOB_URL:-}}
if [ -z "$JOB" ] && [ -n "${GITHUB_RUN_ID:-}" ]; then
  JOB="${GITHUB_SERVER_URL:-https://github.com}/${GITHUB_REPOSITORY:-}/actions/runs/$GITHUB_RUN_ID"
fi

# The protected branch as the server has it now, with its whole history: the lock in
# force is found on the nearest noted first-parent ancestor, and `freeze status`
# dates a test by its first commit, neither of which a shallow clone can see.
if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
  git fetch --quiet --unshallow "$REMOTE"
fi
git fetch --quiet "$REMOTE" "refs/heads/$BRANCH"
git checkout --quiet --detach FETCH_HEAD

# The locks. A server that has pinned nothing yet has no notes ref, and fetching a
# ref that does not exist fails, so ask first; a network error still stops the job.
if [ -n "$(git ls-remote "$REMOTE" "$NOTES")" ]; then
  git fetch --quiet "$REMOTE" "+$NOTES:$NOTES"
else
  echo "git-evidence: $REMOTE has no $NOTES yet; freeze add will say what to do" >&2
fi

# Run the test RUNS times for each of SEEDS seeds. An entry is appended only if one
# seed both passed and failed. Exit 1: nothing to freeze (the output says why: it
# always passed, it always failed, or one seed always fails: a counterexample to
# keep). Exit 2: it could not decide (no lock in force, not a repository, ...).
status=0
git evidence freeze add --ci --writer "$WRITER" --test "$TEST_ID" \
  --runs "$RUNS" --seeds "$SEEDS" \
  --reason "reproduced by CI${JOB:+ ($JOB)}" -- "$@" || status=$?
if [ "$status" -ne 0 ]; then
  exit "$status"
fi

# The ledger commit travels alone, by the ledger writer. A checkout on CI often
# has no committer identity: name the writer when none is configured.
git add -- "$LEDGER"
if git config user.email >/dev/null; then
  git commit --quiet -m "freeze $TEST_ID (reproduced by CI)" -- "$LEDGER"
else
  git -c user.name="$WRITER" -c user.email="$WRITER@invalid" \
    commit --quiet -m "freeze $TEST_ID (reproduced by CI)" -- "$LEDGER"
fi
git push --quiet "$REMOTE" "HEAD:refs/heads/$BRANCH"

# Later, in the test job: skip only what is frozen now, by the ledger's clock.
#   git evidence freeze status "$TEST_ID" && echo "frozen: not blocking"
