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

static PyMethodDef methods[] = {
    {"lines_without", lines_without, METH_VARARGS,
     "lines_without(chunk, needles) -> (n, keep, picked): the lines holding none of the needles"},
    {"distinct_after", distinct_after, METH_VARARGS,
     "distinct_after(chunk, needles, per_line, later_max) -> (lines, found, before, after)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cscan", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__cscan(void)
{
    return PyModule_Create(&module);
}
