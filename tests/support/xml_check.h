/* SPDX-License-Identifier: Apache-2.0 */
/* xml_check.h - what the parts of test_xml share: the offers of
 * tests/data/offers read and parsed, and a rendered document validated and
 * looked into.  The short names are the ones the tests were written with. */
#ifndef ACC_XML_CHECK_H
#define ACC_XML_CHECK_H

#include <libxml/tree.h>
#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "xml.h"

#define OFFERS ACC_TEST_DATA "/offers/"

/* tests/data/offers/name, NUL-terminated; NULL (said on stderr) when unreadable. */
char *slurp_case(const char *name, size_t *len);
acc_err parse_case(const char *name, struct acc_offer *o, struct acc_error *err);
bool is_empty_offer(const struct acc_offer *o);

/* Validates a rendered document against the schemas; prints why not. */
bool valid(const struct acc_buf *b);
xmlDocPtr read_doc(const struct acc_buf *b);
/* The first element named name in ns, depth first from n. */
xmlNode *find(xmlNode *n, const char *ns, const char *name);
bool content_is(xmlNode *n, const char *want);
bool prop_is(xmlNode *n, const char *ns, const char *name, const char *want);
int count_lines(const char *s);

#endif
