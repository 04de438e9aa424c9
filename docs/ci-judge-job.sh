#!/bin/sh
# A CI job that judges an agent's patch and records the verdict as a git note.
# It runs as the CI identity listed in [identities].verdict_writers (by default the lock
# writers; here: ci-bot), in a fresh clone the agent never had access to: the agent
# hands over a patch, never its checkout, so nothing it wrote can judge it.
set -eu

PATCH="$1"                                   # the agent's patch (git format-patch / diff)
export GIT_EVIDENCE_PUSHER=ci-bot            # the identity the server checks
export GIT_AUTHOR_NAME="ci-bot" GIT_AUTHOR_EMAIL="ci-bot@example.com"
export GIT_COMMITTER_NAME="ci-bot" GIT_COMMITTER_EMAIL="ci-bot@example.com"

work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
git clone --quiet "$REPO_URL" "$work/repo" && cd "$work/repo"
# A glob: the locks and the verdicts, and no failure while the server has neither yet.
git fetch --quiet origin "+refs/notes/evidence*:refs/notes/evidence*"

# 1. The pin. post-receive pins every accepted commit whose lock roots changed (the lock
#    in force elsewhere is the nearest pin); if none is in force (a server without the
#    hook, a pin still being written), the lock writer pins it here.
if ! git evidence show-lock origin/main >/dev/null; then
  git evidence lock origin/main
  git push --quiet origin refs/notes/evidence
fi

# 2. The candidate: the patch applied on top of the base, as a commit of this clone
#    (the commit the verdict is noted on, and the one pushed for review if accepted).
git checkout --quiet --detach origin/main
if ! git apply --index "$PATCH"; then
  # The judge says so in the record, with nothing run.
  git evidence judge --patch "$PATCH" --base origin/main --out verdict.json || true
  exit 1
fi
git commit --quiet -m "candidate from $(basename "$PATCH")"
candidate=$(git rev-parse HEAD)

# 3. Judge it. The judge exports the candidate's tree to a workspace of its own with
#    no git directory: the candidate's tests cannot write the pin, the notes or the
#    verdict. Exit 0: accept or flake_frozen; 1: any other class; 2: could not decide.
status=0
git evidence judge "$candidate" --base origin/main --note \
    --out verdict.json --log judge.log --jobs 2 || status=$?

# 4. Publish the verdict note as the verdict writer (the server refuses it from anyone
#    else, and refuses any note that is not a canonical verdict record).
git push --quiet origin refs/notes/evidence-verdicts
git log -1 --notes=evidence-verdicts --format='%H%n%N' "$candidate" | head -c 400; echo

case $status in
  0) git push --quiet origin "$candidate:refs/heads/review/$(basename "$PATCH" .patch)" ;;
  1) # A flake_candidate verdict carries the exact freeze line, for the freeze job
     # (docs/ci-freeze-job.sh) to reproduce on its own; the judge never freezes.
     python3 -c 'import json,sys; v=json.load(open("verdict.json")); print(v["class"], "-", v["reason"]); print(v["freeze_line"] or "")' ;;
esac
exit $status
