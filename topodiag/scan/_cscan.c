/* The optional compiled line scanner (topodiag/scan/lines.py loads it).
 *
 * Two generic primitives over one chunk of whole lines (bytes), each a single pass of memchr/memmem
 * where the pure Python version makes several passes and a C-level call per line. They know bytes,
 * lines and the needles they are given, nothing of any producer's format: what a needle means (an
 * NCCL tag) and what is done with the lines and texts found stays in Python (topodiag/scan/lines.py,
 * topodiag/parsers/nccl_debug/lines.py). Their pure-Python twins are topodiag/scan/lines.py
 * `lines_without_py` and `distinct_after_py`; tests/parsers/test_linescan.py and
 * tests/scan/test_cscan_sanitized.py (under ASan and UBSan) compare them.
 *
 *   lines_without(chunk, needles) -> (n, keep, picked)
 *       The lines of the chunk as chunk.split(b"\n") cuts them (the empty piece after a final "\n" is
 *       no line): n, their count; keep, the indices of the non-empty lines holding none of the needles,
 *       and of the lines that end in a needle: the line's last byte in "!".."~" is the needle's last
 *       such byte, and the needle's bytes after that (outside "!".."~") follow it on the line; picked,
 *       those lines.
 *
 *   distinct_after(chunk, needles, per_line, later_max) -> (lines, found, before, after)
 *       The needles found left to right without overlap (at one place the first needle of the tuple
 *       that matches); lines: the count of "\n"; found: how many; on each line, the text before its
 *       first needle, distinct, in order of first appearance (`before`, a dict of None values); the
 *       first `per_line` needles of each line with their text to the end of the line (of a line's
 *       second needle and on: its first `later_max` bytes at most), distinct, from the needle on, in
 *       order of first appearance: {text: [count, position of its first needle]} (`after`).
 *       The needles must share a first byte (the scan looks for their common start); no needle may hold
 *       a newline (for both functions).
 *
 *   kernel_keys(text, ends=False) -> (n, distinct, tags[, ends, longest]) or None
 *       The one primitive that knows a format: the kernel log's line key, the five groups of
 *       topodiag/parsers/_kernel_log_keys.py `_KEY_RE` (the syslog month's first letter, "<host>
 *       kernel: ", the "[" of a dmesg stamp, the ";" of a /dev/kmsg prefix, the rest of the line), for
 *       each line of a str as text.split("\n") cuts it, the distinct ones counted by a hash table: n,
 *       the count of lines; distinct, [(key, tag, count, tag)] in order of first appearance (a key's
 *       tag: the index of its first line); tags, each line's tag as native uint32 bytes. That regex's
 *       match of five groups a line is most of the block digest's cost in Python (25 ms a 4 MiB block,
 *       2 ms here); its twin is `digest_py` there, and tests/parsers/test_kernel_keys.py holds them
 *       equal. None for a str that is not ASCII (the regex reads it: `\S` and the character counts of
 *       its bounds are Unicode's). With `ends`, also each line's end (the place of its "\n", or the
 *       text's length) as native uint32 bytes and the longest line's length. Built with
 *       TOPODIAG_KEYS_COLLIDE (the sanitized test), every key hashes alike, so each is compared in full.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>  /* defines _GNU_SOURCE on glibc: memmem */
#include <string.h>

static const char *
find(const char *hay, Py_ssize_t n, const char *needle, Py_ssize_t k)
{
#if defined(__GLIBC__) || defined(__APPLE__)
    return memmem(hay, (size_t)n, needle, (size_t)k);
#else
    /* memmem, written out where the C library lacks it */
    if (k == 0)
        return hay;
    while (n >= k) {
        const char *p = memchr(hay, needle[0], (size_t)(n - k + 1));
        if (p == NULL)
            return NULL;
        if (memcmp(p, needle, (size_t)k) == 0)
            return p;
        n -= (p - hay) + 1;
        hay = p + 1;
    }
    return NULL;
#endif
}


#define MAX_NEEDLES 8

/* the needles of a call: pointers into the tuple's bytes (borrowed for the call), their common start */
typedef struct {
    Py_ssize_t n, common;
    const char *s[MAX_NEEDLES];
    Py_ssize_t len[MAX_NEEDLES];
} needles_t;

static int
get_needles(PyObject *tuple, needles_t *nd)
{
    if (!PyTuple_Check(tuple) || PyTuple_GET_SIZE(tuple) < 1 || PyTuple_GET_SIZE(tuple) > MAX_NEEDLES) {
        PyErr_SetString(PyExc_ValueError, "needles: a tuple of 1 to 8 non-empty bytes without a newline");
        return -1;
    }
    nd->n = PyTuple_GET_SIZE(tuple);
    for (Py_ssize_t i = 0; i < nd->n; i++) {
        PyObject *b = PyTuple_GET_ITEM(tuple, i);
        if (!PyBytes_Check(b) || PyBytes_GET_SIZE(b) < 1 ||
            memchr(PyBytes_AS_STRING(b), '\n', (size_t)PyBytes_GET_SIZE(b)) != NULL) {
            PyErr_SetString(PyExc_ValueError, "needles: a tuple of 1 to 8 non-empty bytes without a newline");
            return -1;
        }
        nd->s[i] = PyBytes_AS_STRING(b);
        nd->len[i] = PyBytes_GET_SIZE(b);
    }
    Py_ssize_t c = nd->len[0];
    for (Py_ssize_t i = 1; i < nd->n; i++) {
        Py_ssize_t k = 0;
        while (k < c && k < nd->len[i] && nd->s[i][k] == nd->s[0][k])
            k++;
        c = k;
    }
    if (c < 1) {
        PyErr_SetString(PyExc_ValueError, "needles: they must share a first byte");
        return -1;
    }
    nd->common = c;
    return 0;
}

/* the first needle in [a, b): its place (NULL: none) and length */
static const char *
find_any(const char *a, const char *b, const needles_t *nd, Py_ssize_t *len)
{
    const char *p = a;
    while (p < b) {
        const char *t = find(p, b - p, nd->s[0], nd->common);
        if (t == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < nd->n; i++) {
            if (b - t >= nd->len[i] && memcmp(t, nd->s[i], (size_t)nd->len[i]) == 0) {
                *len = nd->len[i];
                return t;
            }
        }
        p = t + 1;
    }
    return NULL;
}

static int
printable(unsigned char c)
{
    return c >= 0x21 && c <= 0x7e;
}

/* whether the line [a, b) has a needle with nothing but bytes outside "!".."~" after it: the line's
   last printable byte ends the needle's last printable byte, and the needle's own tail (bytes outside
   "!".."~") follows it within the line */
static int
ends_bare(const char *a, const char *b, const needles_t *nd)
{
    const char *q = b;
    while (q > a && !printable((unsigned char)q[-1]))
        q--;
    for (Py_ssize_t i = 0; i < nd->n; i++) {
        Py_ssize_t lp = nd->len[i];
        while (lp > 0 && !printable((unsigned char)nd->s[i][lp - 1]))
            lp--;
        Py_ssize_t tail = nd->len[i] - lp;
        if (lp == 0 || q - a < lp || b - q < tail)
            continue;
        if (memcmp(q - lp, nd->s[i], (size_t)nd->len[i]) == 0)
            return 1;
    }
    return 0;
}

static PyObject *
lines_without(PyObject *Py_UNUSED(self), PyObject *args)
{
    Py_buffer view;
    PyObject *tuple;
    needles_t nd;
    if (!PyArg_ParseTuple(args, "y*O:lines_without", &view, &tuple))
        return NULL;
    PyObject *keep = NULL, *picked = NULL;
    if (get_needles(tuple, &nd) < 0)
        goto fail;
    keep = PyList_New(0);
    picked = PyList_New(0);
    if (keep == NULL || picked == NULL)
        goto fail;
    const char *s = view.buf;
    const char *end = s + view.len;
    Py_ssize_t i = 0, len;
    const char *a = s;
    for (;;) {
        const char *nl = memchr(a, '\n', (size_t)(end - a));
        const char *b = nl ? nl : end;
        if (nl == NULL && a == end && i > 0)
            break; /* the empty piece after a final "\n" */
        int want;
        if (b == a)
            want = 0;
        else if (find_any(a, b, &nd, &len) == NULL)
            want = 1;
        else
            want = ends_bare(a, b, &nd);
        if (want) {
            PyObject *idx = PyLong_FromSsize_t(i);
            PyObject *line = PyBytes_FromStringAndSize(a, b - a);
            int bad = idx == NULL || line == NULL || PyList_Append(keep, idx) < 0 || PyList_Append(picked, line) < 0;
            Py_XDECREF(idx);
            Py_XDECREF(line);
            if (bad)
                goto fail;
        }
        i++;
        if (nl == NULL)
            break;
        a = nl + 1;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(nNN)", i, keep, picked);
fail:
    Py_XDECREF(keep);
    Py_XDECREF(picked);
    PyBuffer_Release(&view);
    return NULL;
}

static int
add_after(PyObject *after, const char *text, const char *stop, Py_ssize_t at)
{
    PyObject *key = PyBytes_FromStringAndSize(text, stop - text);
    if (key == NULL)
        return -1;
    PyObject *val = PyDict_GetItemWithError(after, key); /* borrowed */
    if (val != NULL) {
        PyObject *count = PyLong_FromSsize_t(PyLong_AsSsize_t(PyList_GET_ITEM(val, 0)) + 1);
        Py_DECREF(key);
        if (count == NULL)
            return -1;
        return PyList_SetItem(val, 0, count); /* steals `count`, drops the old one */
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    }
    val = Py_BuildValue("[nn]", (Py_ssize_t)1, at);
    int bad = val == NULL || PyDict_SetItem(after, key, val) < 0;
    Py_XDECREF(val);
    Py_DECREF(key);
    return bad ? -1 : 0;
}

static PyObject *
distinct_after(PyObject *Py_UNUSED(self), PyObject *args)
{
    Py_buffer view;
    PyObject *tuple;
    Py_ssize_t per_line, later_max;
    needles_t nd;
    if (!PyArg_ParseTuple(args, "y*Onn:distinct_after", &view, &tuple, &per_line, &later_max))
        return NULL;
    PyObject *before = NULL, *after = NULL;
    if (get_needles(tuple, &nd) < 0)
        goto fail;
    if (per_line < 0 || later_max < 0) {
        PyErr_SetString(PyExc_ValueError, "per_line and later_max: 0 or more");
        goto fail;
    }
    before = PyDict_New();
    after = PyDict_New();
    if (before == NULL || after == NULL)
        goto fail;
    const char *s = view.buf;
    const char *end = s + view.len;
    Py_ssize_t lines = 0, found = 0, taken = 0, len;
    const char *line_start = s, *pos = s;
    const char *last_pre = NULL; /* the last `before` text recorded, to skip the dict for a repeat */
    Py_ssize_t last_len = -1;
    while (pos < end) {
        const char *t = find_any(pos, end, &nd, &len);
        const char *stop = t ? t : end;
        const char *nl;
        while ((nl = memchr(pos, '\n', (size_t)(stop - pos))) != NULL) { /* each newline starts a line */
            lines++;
            line_start = pos = nl + 1;
            taken = 0;
        }
        if (t == NULL)
            break;
        found++;
        if (taken++ < per_line) {
            const char *eol = memchr(t, '\n', (size_t)(end - t));
            if (eol == NULL)
                eol = end;
            if (add_after(after, t, (taken > 1 && eol - t > later_max) ? t + later_max : eol, t - s) < 0)
                goto fail;
            Py_ssize_t plen = t - line_start;
            if (taken == 1 && (plen != last_len || memcmp(line_start, last_pre, (size_t)plen) != 0)) {
                PyObject *key = PyBytes_FromStringAndSize(line_start, plen);
                if (key == NULL || PyDict_SetDefault(before, key, Py_None) == NULL) {
                    Py_XDECREF(key);
                    goto fail;
                }
                Py_DECREF(key);
                last_pre = line_start;
                last_len = plen;
            }
        }
        pos = t + len;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(nnNN)", lines, found, before, after);
fail:
    Py_XDECREF(before);
    Py_XDECREF(after);
    PyBuffer_Release(&view);
    return NULL;
}

/* ---- kernel_keys: the kernel log's line keys (topodiag/parsers/_kernel_log_keys.py) ---- */

#include <stdint.h>

static int
k_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* `\s` of a str pattern over ASCII (Py_UNICODE_ISSPACE): \t \n \v \f \r, \x1c-\x1f and the blank */
static int
k_space(unsigned char c)
{
    return c == ' ' || (c >= 9 && c <= 13) || (c >= 28 && c <= 31);
}

/* the length of the run of digits from `p` (before `e`), at most `most` of them (a possessive {1,most}+) */
static Py_ssize_t
k_digits(const unsigned char *p, const unsigned char *e, Py_ssize_t most)
{
    Py_ssize_t k = 0;
    while (k < most && p + k < e && k_digit(p[k]))
        k++;
    return k;
}

/* one line's key, as _KEY_RE's groups: the syslog month's first letter (0: none), "<host> kernel: "
   [g2, g2 + g2n), whether a dmesg stamp ("[") or a /dev/kmsg prefix (";") was taken, the rest from `rest` */
typedef struct {
    unsigned char g1;
    unsigned char mark; /* 0, '[' or ';' */
    Py_ssize_t g2, g2n, rest, restn;
} kkey_t;

static void
k_key(const unsigned char *s, Py_ssize_t ls, Py_ssize_t le, kkey_t *k)
{
    const unsigned char *a = s + ls, *e = s + le, *p = a;
    k->g1 = 0;
    k->mark = 0;
    k->g2 = k->g2n = 0;
    /* (?:([A-Z])[a-z]{2} [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] (\S{1,64}+ kernel: ?))? */
    if (e - a >= 25 && a[0] >= 'A' && a[0] <= 'Z' && a[1] >= 'a' && a[1] <= 'z' && a[2] >= 'a' && a[2] <= 'z' &&
        a[3] == ' ' && (a[4] == ' ' || k_digit(a[4])) && k_digit(a[5]) && a[6] == ' ' && k_digit(a[7]) &&
        k_digit(a[8]) && a[9] == ':' && k_digit(a[10]) && k_digit(a[11]) && a[12] == ':' && k_digit(a[13]) &&
        k_digit(a[14]) && a[15] == ' ') {
        const unsigned char *h = a + 16;
        Py_ssize_t n = 0;
        while (n < 64 && h + n < e && !k_space(h[n]))
            n++;
        if (n >= 1 && e - (h + n) >= 8 && memcmp(h + n, " kernel:", 8) == 0) {
            const unsigned char *q = h + n + 8;
            if (q < e && *q == ' ')
                q++;
            k->g1 = a[0];
            k->g2 = h - s;
            k->g2n = q - h;
            p = q;
        }
    }
    /* (?:(\[)[ \t]*+[0-9]{1,12}+\.[0-9]{1,9}+\]|[0-9]{1,3}+,[0-9]{1,20}+,[0-9]{1,17}+,[^;\n]{0,40}+(;))? */
    if (p < e && *p == '[') {
        const unsigned char *q = p + 1;
        while (q < e && (*q == ' ' || *q == '\t'))
            q++;
        Py_ssize_t d = k_digits(q, e, 12);
        if (d >= 1 && q + d < e && q[d] == '.') {
            q += d + 1;
            d = k_digits(q, e, 9);
            if (d >= 1 && q + d < e && q[d] == ']') {
                k->mark = '[';
                p = q + d + 1;
            }
        }
    }
    else if (p < e && k_digit(*p)) {
        const unsigned char *q = p;
        static const Py_ssize_t most[3] = {3, 20, 17};
        int ok = 1;
        for (int i = 0; i < 3 && ok; i++) {
            Py_ssize_t d = k_digits(q, e, most[i]);
            ok = d >= 1 && q + d < e && q[d] == ',';
            q += d + 1;
        }
        if (ok) {
            Py_ssize_t f = 0;
            while (f < 40 && q + f < e && q[f] != ';')
                f++;
            if (q + f < e && q[f] == ';') {
                k->mark = ';';
                p = q + f + 1;
            }
        }
    }
    k->rest = p - s;
    k->restn = e - p;
}

static uint64_t
k_hash(const unsigned char *p, Py_ssize_t n, uint64_t h)
{
#ifdef TOPODIAG_KEYS_COLLIDE /* the sanitized test's build: every key in one chain, compared in full */
    (void)p;
    (void)n;
    (void)h;
    return 0;
#endif
    h ^= (uint64_t)n * 0x9E3779B97F4A7C15ull;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, (size_t)n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}

typedef struct {
    kkey_t k;
    Py_ssize_t first, count;
    uint64_t h;
} kentry_t;

static int
k_same(const unsigned char *s, const kkey_t *x, const kkey_t *y)
{
    return x->g1 == y->g1 && x->mark == y->mark && x->g2n == y->g2n && x->restn == y->restn &&
           memcmp(s + x->rest, s + y->rest, (size_t)x->restn) == 0 &&
           memcmp(s + x->g2, s + y->g2, (size_t)x->g2n) == 0;
}

static PyObject *
k_str(PyObject *text, Py_ssize_t a, Py_ssize_t n)
{
    return PyUnicode_Substring(text, a, a + n);
}

static PyObject *
kernel_keys(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *text;
    int want_ends = 0;
    if (!PyArg_ParseTuple(args, "O|p:kernel_keys", &text, &want_ends))
        return NULL;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "kernel_keys: a str");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0)
        return NULL;
#endif
    if (!PyUnicode_IS_ASCII(text))
        Py_RETURN_NONE; /* the regex reads it */
    const unsigned char *s = (const unsigned char *)PyUnicode_DATA(text);
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    if ((uint64_t)len > UINT32_MAX)
        Py_RETURN_NONE; /* the tags and ends are 32-bit */
    Py_ssize_t n = 1;
    for (const unsigned char *q = s; (q = memchr(q, '\n', (size_t)(s + len - q))) != NULL; q++)
        n++;
    PyObject *tags = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(uint32_t));
    PyObject *ends = want_ends ? PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(uint32_t)) : NULL;
    if (tags == NULL || (want_ends && ends == NULL)) {
        Py_XDECREF(tags);
        Py_XDECREF(ends);
        return NULL;
    }
    uint32_t *tag = (uint32_t *)PyBytes_AS_STRING(tags);
    uint32_t *end_at = ends ? (uint32_t *)PyBytes_AS_STRING(ends) : NULL;
    Py_ssize_t longest = 0;
    Py_ssize_t cap = 64, used = 0, mask = 255; /* entries; the table holds 4 x their room */
    kentry_t *ent = PyMem_Malloc((size_t)cap * sizeof(kentry_t));
    Py_ssize_t *table = PyMem_Malloc((size_t)(mask + 1) * sizeof(Py_ssize_t));
    PyObject *out = NULL, *distinct = NULL, *empty = NULL, *marks[2] = {NULL, NULL};
    if (ent == NULL || table == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memset(table, 0xff, (size_t)(mask + 1) * sizeof(Py_ssize_t));
    Py_ssize_t ls = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const unsigned char *nl = memchr(s + ls, '\n', (size_t)(len - ls));
        Py_ssize_t le = nl ? nl - s : len;
        if (end_at != NULL) {
            end_at[i] = (uint32_t)le;
            if (le - ls > longest)
                longest = le - ls;
        }
        kkey_t k;
        k_key(s, ls, le, &k);
        uint64_t h = k_hash(s + k.rest, k.restn, ((uint64_t)k.g1 << 8) | k.mark);
        if (k.g2n)
            h = k_hash(s + k.g2, k.g2n, h);
        Py_ssize_t at = (Py_ssize_t)(h & (uint64_t)mask);
        for (;;) {
            Py_ssize_t e = table[at];
            if (e < 0) {
                if (used == cap) {
                    kentry_t *more = PyMem_Realloc(ent, (size_t)cap * 2 * sizeof(kentry_t));
                    if (more == NULL) {
                        PyErr_NoMemory();
                        goto done;
                    }
                    ent = more;
                    cap *= 2;
                    Py_ssize_t *t2 = PyMem_Malloc((size_t)cap * 4 * sizeof(Py_ssize_t));
                    if (t2 == NULL) {
                        PyErr_NoMemory();
                        goto done;
                    }
                    PyMem_Free(table);
                    table = t2;
                    mask = cap * 4 - 1;
                    memset(table, 0xff, (size_t)(mask + 1) * sizeof(Py_ssize_t));
                    for (Py_ssize_t j = 0; j < used; j++) {
                        Py_ssize_t b = (Py_ssize_t)(ent[j].h & (uint64_t)mask);
                        while (table[b] >= 0)
                            b = (b + 1) & mask;
                        table[b] = j;
                    }
                    at = (Py_ssize_t)(h & (uint64_t)mask);
                    continue;
                }
                ent[used].k = k;
                ent[used].first = i;
                ent[used].count = 1;
                ent[used].h = h;
                table[at] = used++;
                tag[i] = (uint32_t)i;
                break;
            }
            if (ent[e].h == h && k_same(s, &ent[e].k, &k)) {
                ent[e].count++;
                tag[i] = (uint32_t)ent[e].first;
                break;
            }
            at = (at + 1) & mask;
        }
        ls = le + 1;
    }
    /* [(key, its tag, its count, its first line)], the keys in order of first appearance */
    empty = PyUnicode_FromStringAndSize("", 0);
    marks[0] = PyUnicode_FromString("[");
    marks[1] = PyUnicode_FromString(";");
    distinct = PyList_New(used);
    if (empty == NULL || marks[0] == NULL || marks[1] == NULL || distinct == NULL)
        goto done;
    for (Py_ssize_t j = 0; j < used; j++) {
        const kkey_t *k = &ent[j].k;
        PyObject *g1 = k->g1 ? k_str(text, k->g2 - 16, 1) : (Py_INCREF(empty), empty);
        PyObject *g2 = k->g2n ? k_str(text, k->g2, k->g2n) : (Py_INCREF(empty), empty);
        PyObject *g3 = k->mark == '[' ? marks[0] : empty;
        PyObject *g4 = k->mark == ';' ? marks[1] : empty;
        PyObject *g5 = k_str(text, k->rest, k->restn);
        PyObject *key = (g1 && g2 && g5) ? PyTuple_Pack(5, g1, g2, g3, g4, g5) : NULL;
        Py_XDECREF(g1);
        Py_XDECREF(g2);
        Py_XDECREF(g5);
        PyObject *item = key ? Py_BuildValue("(Nnnn)", key, ent[j].first, ent[j].count, ent[j].first) : NULL;
        if (item == NULL)
            goto done;
        PyList_SET_ITEM(distinct, j, item);
    }
    if (ends != NULL)
        out = Py_BuildValue("(nONNn)", n, distinct, tags, ends, longest);
    else
        out = Py_BuildValue("(nON)", n, distinct, tags);
    tags = ends = NULL;
done:
    Py_XDECREF(tags);
    Py_XDECREF(ends);
    Py_XDECREF(distinct);
    Py_XDECREF(empty);
    Py_XDECREF(marks[0]);
    Py_XDECREF(marks[1]);
    PyMem_Free(ent);
    PyMem_Free(table);
    return out;
}

static PyMethodDef methods[] = {
    {"lines_without", lines_without, METH_VARARGS,
     "lines_without(chunk, needles) -> (n, keep, picked): the lines holding none of the needles"},
    {"distinct_after", distinct_after, METH_VARARGS,
     "distinct_after(chunk, needles, per_line, later_max) -> (lines, found, before, after)"},
    {"kernel_keys", kernel_keys, METH_VARARGS,
     "kernel_keys(text, ends=False) -> (n, distinct, tags[, ends, longest]) or None: the kernel log's line keys"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cscan", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__cscan(void)
{
    return PyModule_Create(&module);
}
