/* SPDX-License-Identifier: Apache-2.0 */
/* conf_keys.c - which keys the configuration readers accept, asked of the
 * readers themselves, for tests/check-doc-keys.sh: the documentation must
 * name exactly those.
 *
 *   conf_keys accordd|accord-site < CANDIDATES
 *   conf_keys adapters
 *   conf_keys settings DIR < CANDIDATES
 *
 * CANDIDATES is one name per line (every identifier that might be a key:
 * the string literals of the readers' sources and the names the documents
 * give).  Each is tried as a key of every section, with a value that is
 * usually wrong: a key the reader does not know is refused with "unknown
 * key 'NAME'", any other answer (the value is wrong, or it is taken) means
 * the reader knows it.  A [site NAME] or [network NAME] section passes the
 * keys it does not know to its adapter; those are the adapter's settings,
 * not keys of the section, so a key counts there only when the section
 * kept it for itself.  Prints "SECTION KEY" per accepted key, sorted by
 * section in the order below, then as the candidates came.  [accounts]
 * takes any user name as a key and is not probed.
 *
 * `conf_keys adapters` prints the compiled-in adapter kinds a section's
 * adapter key may name: "site KIND" for those that reserve nodes, "network
 * KIND" for those that reserve bandwidth.
 *
 * `conf_keys settings DIR` asks each compiled-in adapter kind which of the
 * candidates it takes as a setting (the other keys of a [site] or [network]
 * section): it is opened (its files in DIR) with the candidate and then a
 * setting nobody takes, so that whatever it does not refuse it stops at the
 * second, before it reaches anything outside; a kind that names the
 * candidate as an "unknown setting" does not take it.  Prints "adapter:KIND
 * KEY" per setting taken. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "resources.h"
#include "site.h"

/* The section names as written in a file, and as printed. */
struct section {
    const char *printed;
    const char *header; /* what goes between [ and ] */
};

static const struct section accordd_sections[] = {
    {"server", "server"},   {"database", "database"},
    {"signing", "signing"}, {"negotiation", "negotiation"},
    {"quota", "quota"},     {"policy", "policy"},
    {"auth", "auth"},       {"launch", "launch"},
    {"site", "site s"},     {"network", "network n"},
    {"link", "link l"},     {"issuer", "issuer i"},
    {"ui", "ui"},
};

/* accord-site reads [site], [network] and [link] with accordd's code
 * (resources/): asked once, for accordd. */
static const struct section site_sections[] = {
    {"daemon", "daemon"},
    {"peer", "peer p"},
};

/* The reader's first problem with "[HEADER]\nKEY = x\n" is not that it
 * does not know KEY. */
static bool known(bool site_daemon, const char *header, const char *key)
{
    char text[512], unknown[300];
    snprintf(text, sizeof text, "[%s]\n%s = x\n", header, key);
    snprintf(unknown, sizeof unknown, "unknown key '%s'", key);
    struct acc_error e = {0};
    acc_err rc;
    if (site_daemon) {
        struct acc_site_config c;
        rc = acc_site_config_load_string(text, "probe", &c, &e);
        if (!rc)
            acc_site_config_release(&c);
    } else {
        struct acc_config c;
        rc = acc_config_load_string(text, "probe", &c, &e);
        if (!rc)
            acc_config_release(&c);
    }
    return !rc || !strstr(e.msg, unknown);
}

/* [site s] or [network n] keeps KEY for itself rather than passing it to
 * its adapter (resources/, the same for both daemons). */
static bool resource_key(const char *header, const char *key)
{
    struct acc_resources_cfg c = {0};
    struct acc_error e = {0};
    acc_err rc = acc_resources_cfg_key(&c, header, key, "x", &e);
    bool own = true;
    if (rc == ACC_OK) {
        const struct acc_kv *kv = c.n_sites ? c.sites[0].settings : c.networks[0].settings;
        size_t n = c.n_sites ? c.sites[0].n_settings : c.networks[0].n_settings;
        for (size_t i = 0; i < n; i++)
            own &= strcmp(kv[i].key, key) != 0;
    } else if (rc == ACC_ERR_NOMEM) {
        fprintf(stderr, "conf_keys: out of memory\n");
        exit(2);
    }
    acc_resources_cfg_release(&c);
    return own;
}

/* The adapter kind takes key as a setting. */
static bool takes(const struct acc_adapter_ops *ops, const char *dir, const char *key)
{
    char db[4096], unknown[300];
    snprintf(db, sizeof db, "%s/probe.db", dir);
    snprintf(unknown, sizeof unknown, "unknown setting '%s'", key);
    const struct acc_kv settings[] = {{key, "x"}, {"zz_no_such_setting", "x"}};
    struct acc_adapter_env env = {
        .name = "p",
        .section = "probe p",
        .db_path = db,
        .settings = settings,
        .n_settings = 2,
        .nodes = 1,
    };
    struct acc_adapter *ad = NULL;
    struct acc_error e = {0};
    acc_err rc = acc_adapter_open(ops, &env, &ad, &e);
    if (!rc) /* it took both: then it names no setting unknown */
        acc_adapter_close(ad);
    return !strstr(e.msg, unknown);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "adapters") == 0) {
        for (size_t i = 0; acc_adapter_kinds[i]; i++) {
            if (acc_adapter_kinds[i]->caps & ACC_CAP_NODES)
                printf("site %s\n", acc_adapter_kinds[i]->kind);
            if (acc_adapter_kinds[i]->caps & ACC_CAP_BANDWIDTH)
                printf("network %s\n", acc_adapter_kinds[i]->kind);
        }
        return 0;
    }
    bool settings = argc == 3 && strcmp(argv[1], "settings") == 0;
    if (!settings &&
        (argc != 2 || (strcmp(argv[1], "accordd") != 0 && strcmp(argv[1], "accord-site") != 0))) {
        fprintf(stderr,
                "usage: conf_keys accordd|accord-site < CANDIDATES | adapters | settings DIR < "
                "CANDIDATES\n");
        return 2;
    }
    bool site_daemon = strcmp(argv[1], "accord-site") == 0;
    const struct section *sections = site_daemon ? site_sections : accordd_sections;
    size_t n_sections = site_daemon ? sizeof site_sections / sizeof site_sections[0]
                                    : sizeof accordd_sections / sizeof accordd_sections[0];

    char **cand = NULL;
    size_t n = 0;
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        char **v = realloc(cand, (n + 1) * sizeof *cand);
        if (!v || !(v[n] = strdup(line))) {
            fprintf(stderr, "conf_keys: out of memory\n");
            return 2;
        }
        cand = v;
        n++;
    }
    if (n == 0) {
        fprintf(stderr, "conf_keys: no candidate on standard input\n");
        return 2;
    }
    for (size_t k = 0; settings && acc_adapter_kinds[k]; k++) {
        for (size_t i = 0; i < n; i++) {
            if (takes(acc_adapter_kinds[k], argv[2], cand[i]))
                printf("adapter:%s %s\n", acc_adapter_kinds[k]->kind, cand[i]);
        }
    }
    for (size_t s = 0; !settings && s < n_sections; s++) {
        const char *h = sections[s].header;
        bool resource = strncmp(h, "site ", 5) == 0 || strncmp(h, "network ", 8) == 0;
        for (size_t i = 0; i < n; i++) {
            if (resource ? resource_key(h, cand[i]) : known(site_daemon, h, cand[i]))
                printf("%s %s\n", sections[s].printed, cand[i]);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(cand[i]);
    free(cand);
    return 0;
}
