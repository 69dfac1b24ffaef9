# SPDX-License-Identifier: Apache-2.0
# Sourced by the browser tests (test_ui.sh, test_ui_oidc.sh):
#
#   browser_node HERE NODE_DIR TMP
#
# installs playwright-core and axe-core (the accessibility checks,
# tests/browser/a11y.mjs), pinned by HERE/package-lock.json, with `npm ci`
# into NODE_DIR (never into the source tree), again only when the lock
# changed; npm's cache is used when it has the packages.  npm's output goes
# to TMP/npm.log, shown when it fails.
browser_node() {
    local here=$1 node_dir=$2 tmp=$3
    if ! cmp -s "$here/package-lock.json" "$node_dir/package-lock.json" ||
        [ ! -d "$node_dir/node_modules/playwright-core" ] ||
        [ ! -d "$node_dir/node_modules/axe-core" ]; then
        mkdir -p "$node_dir"
        cp "$here/package.json" "$here/package-lock.json" "$node_dir/"
        (cd "$node_dir" && npm ci --no-audit --no-fund --prefer-offline >"$tmp/npm.log" 2>&1) ||
            { cat "$tmp/npm.log"; echo "FAIL: npm ci of playwright-core and axe-core"; return 1; }
    fi
}
