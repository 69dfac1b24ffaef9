/* jsonv.h - a small JSON reader: text in, a tree of values out.
 *
 * accordctl asks the server for JSON and shows it in tables; the tests read
 * accordctl's --json output with it.  Strict RFC 8259 (no comments, no
 * trailing commas), depth and size bounded. */
#ifndef ACC_JSONV_H
#define ACC_JSONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum jv_type { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT };

struct jv {
    enum jv_type type;
    bool b;
    double num;
    char *str; /* strings; object member names are in keys */
    struct jv **items;
    char **keys; /* objects: keys[i] names items[i] */
    size_t n;
};

/* Parses text; NULL with a message in err (err_size bytes) when it is not
 * valid JSON.  Free with jv_free. */
struct jv *jv_parse(const char *text, char *err, size_t err_size);
void jv_free(struct jv *v);

/* The member of an object, or NULL (also when v is not an object). */
const struct jv *jv_get(const struct jv *v, const char *key);
/* The i-th element of an array, or NULL. */
const struct jv *jv_at(const struct jv *v, size_t i);
/* Elements of an array or members of an object; 0 for anything else. */
size_t jv_len(const struct jv *v);
/* The string of a member, or dflt when absent or not a string. */
const char *jv_str(const struct jv *v, const char *key, const char *dflt);
/* The number of a member as an integer, or dflt. */
int64_t jv_int(const struct jv *v, const char *key, int64_t dflt);
/* The boolean of a member, or dflt. */
bool jv_bool(const struct jv *v, const char *key, bool dflt);

#endif
