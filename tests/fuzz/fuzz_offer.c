/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_offer.c - libFuzzer harness for the offer parser: any bytes go to
 * acc_xml_parse_offer under the default limits.  An accepted offer must be
 * whole (at least one component, a window); a refused one must leave the
 * output empty.  Crashes, leaks and sanitizer reports are what libFuzzer
 * looks for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xml.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    struct acc_error err = {0};
    if (acc_xml_init(&err) != ACC_OK)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct acc_offer zero;
    struct acc_xml_limits lim = ACC_XML_LIMITS_DEFAULT;
    struct acc_offer o;
    struct acc_error err = {0};
    memset(&o, 0, sizeof o);
    acc_err rc = acc_xml_parse_offer((const char *)data, size, &lim, &o, &err);
    if (rc == ACC_OK) {
        if (o.n_components == 0)
            abort(); /* accepted without a component */
    } else {
        if (memcmp(&o, &zero, sizeof o) != 0 || err.msg[0] == '\0')
            abort(); /* refused, but left something behind or said nothing */
    }
    acc_offer_release(&o);
    return 0;
}
