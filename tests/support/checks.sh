# SPDX-License-Identifier: Apache-2.0
# checks.sh - the counted checks of Accord's shell tests (sourced):
#   ok WHAT / bad WHAT           count a check that passed / failed, print it
#   expect WHAT COMMAND...       ok or bad by COMMAND's status
#   no_sanitizer_reports FILE... one check: no ASan/LSan/UBSan report in the files
#   checks_summary NAME [EXTRA]  "NAME: P of N checks passed EXTRA"; status 0 when none failed
# The counters are the globals checks and failures.
checks=0
failures=0

ok() {
    checks=$((checks + 1))
    echo "ok: $*"
}

bad() {
    checks=$((checks + 1))
    failures=$((failures + 1))
    echo "FAIL: $*"
}

expect() { # DESCRIPTION CONDITION-COMMAND...
    local what=$1
    shift
    if "$@"; then ok "$what"; else bad "$what"; fi
}

no_sanitizer_reports() { # LOG...
    local pattern="AddressSanitizer\|LeakSanitizer\|runtime error:" found
    if found=$(grep -l "$pattern" "$@"); then
        bad "sanitizer reports in $found"
        # shellcheck disable=SC2086
        grep -h -A12 "$pattern" $found | head -n 40
    else
        ok "no sanitizer report in any daemon's log"
    fi
}

checks_summary() { # NAME [EXTRA]
    echo "$1: $((checks - failures)) of $checks checks passed${2:+ $2}"
    [ "$failures" = 0 ]
}
