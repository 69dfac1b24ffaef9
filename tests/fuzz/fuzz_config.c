/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_config.c - libFuzzer harness for the INI configuration: any text goes
 * to acc_config_load_string (inih and every section's checks).  A refused
 * configuration must say why; an accepted one must have a site. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0; /* a configuration is small; longer inputs only slow the search */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct acc_config c;
    struct acc_error err = {0};
    acc_err rc = acc_config_load_string(text, "fuzz", &c, &err);
    if (rc == ACC_OK) {
        if (c.res.n_sites == 0 || !c.db_path || !c.listen_host)
            abort();
        acc_config_release(&c);
    } else if (err.msg[0] == '\0') {
        abort();
    }
    free(text);
    return 0;
}
