/* The optional compiled line scanner of the NCCL log readers (topodiag/scan/lines.py).
 *
 * Two functions over one chunk of whole lines, each a single pass of memchr/memmem where the pure
 * Python version makes several passes and a C-level call per line. They return exactly what their
 * Python twins in topodiag/scan/lines.py return (tests/parsers/test_linescan.py compares them on
 * the fixtures and on generated text); the package works without this module, only slower.
 *
 *   tagged(chunk) -> (lines, info, warn, trace, prefixes, messages, per_line, marks, warns)
 *       lines: the count of "\n"; info / warn / trace: the counts of "NCCL INFO", "NCCL WARN" and
 *       "NCCL TRACE"; prefixes: a dict whose keys stand for the texts before the first "NCCL INFO " or
 *       "NCCL TRACE " of each line, distinct, in order of first appearance (values None): for an ASCII
 *       text, the (host, device) that the `host:pid:tid [dev]` pattern (nccl_debug/facts.py PREFIX_RE)
 *       finds first in it, as (bytes, int), and nothing when it finds none; any other text as it is.
 *       messages: the first TAGS_PER_LINE such tags of each line with their text to the end of the
 *       line (of a line's second tag and on: its first LATER_TEXT_MAX bytes at most), distinct, from
 *       the tag on, in order of first appearance: {text: [count, position of its first tag]}, except the tags whose text (past a "[Rank N] ") starts with "NET/IB: ": per_line,
 *       the positions of those tags; marks: the positions of "NCCL failure", "NCCL error" and "NCCL
 *       version" with no "NCCL INFO", "NCCL WARN" or "NCCL TRACE" before them on their line; warns:
 *       (position, line start, line end, line index in the chunk) of the first "NCCL WARN" of each line.
 *
 *   untagged(chunk) -> (n, keep, picked)
 *       The lines of the chunk as chunk.split(b"\n") cuts them (the empty piece after a final "\n" is
 *       no line): n, their count; keep, the indices of the lines the nccl-tests reader may act on: the
 *       non-empty lines without " NCCL INFO " or " NCCL TRACE ", and the lines whose last such tag is
 *       followed by nothing but bytes outside "!".."~" to the end of the line; picked, those lines.
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

/* PREFIX_RE of nccl_debug/facts.py over ASCII text:
 *   ([^\s:\[\]`'"]+):[0-9]+:[0-9]+\s+\[([0-9]+)\]     (\s of text: \t \n \v \f \r \x1c-\x1f and space)
 * Every start inside one run of host characters meets the same rest, so the first match starts at the
 * first run whose rest matches; each part after the host is a run of one class ended by a fixed byte,
 * so no backtracking can change the outcome. */
static int
is_space(unsigned char c)
{
    return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
}

static int
is_host(unsigned char c)
{
    return !(is_space(c) || c == ':' || c == '[' || c == ']' || c == '`' || c == '\'' || c == '"');
}

static int
digits(const unsigned char *s, Py_ssize_t i, Py_ssize_t n)
{
    Py_ssize_t j = i;
    while (j < n && s[j] >= '0' && s[j] <= '9')
        j++;
    return (int)(j - i);
}

/* 1: found, host [*h0, *h1) and device *dev; 0: none; -1: a device number too long to hold here */
static int
host_dev(const unsigned char *s, Py_ssize_t n, Py_ssize_t *h0, Py_ssize_t *h1, long *dev)
{
    Py_ssize_t i = 0;
    while (i < n) {
        if (!is_host(s[i])) {
            i++;
            continue;
        }
        Py_ssize_t a = i;
        while (i < n && is_host(s[i]))
            i++;
        Py_ssize_t j = i, k;
        if (j >= n || s[j] != ':')
            continue;
        j++;
        if ((k = digits(s, j, n)) == 0)
            continue;
        j += k;
        if (j >= n || s[j] != ':')
            continue;
        j++;
        if ((k = digits(s, j, n)) == 0)
            continue;
        j += k;
        if (j >= n || !is_space(s[j]))
            continue;
        while (j < n && is_space(s[j]))
            j++;
        if (j >= n || s[j] != '[')
            continue;
        j++;
        if ((k = digits(s, j, n)) == 0 || j + k >= n || s[j + k] != ']')
            continue;
        if (k > 9)
            return -1;
        long d = 0;
        for (Py_ssize_t q = j; q < j + k; q++)
            d = d * 10 + (s[q] - '0');
        *h0 = a;
        *h1 = i;
        *dev = d;
        return 1;
    }
    return 0;
}

/* the key of one line's prefix (see tagged): a new reference, Py_None for none, NULL on error */
static PyObject *
prefix_key(const char *p, Py_ssize_t len)
{
    const unsigned char *s = (const unsigned char *)p;
    for (Py_ssize_t i = 0; i < len; i++)
        if (s[i] >= 0x80)
            return PyBytes_FromStringAndSize(p, len);
    Py_ssize_t h0, h1;
    long dev;
    int got = host_dev(s, len, &h0, &h1, &dev);
    if (got < 0)
        return PyBytes_FromStringAndSize(p, len);
    if (got == 0)
        Py_RETURN_NONE;
    return Py_BuildValue("(y#l)", p + h0, h1 - h0, dev);
}

/* the INFO/TRACE tags of a line whose text is read: each text runs to the end of the line, so a line of
   repeated tags would cost its length squared (the output of a few processes run together on one line
   is read) */
#define TAGS_PER_LINE 4
/* the text of a line's second to fourth tag is cut at this many bytes: a giant line of repeated tags
   then costs its own length once, not four times (the first tag's text runs to the end of the line) */
#define LATER_TEXT_MAX 4096

/* after a tag's "NCCL INFO " or "NCCL TRACE ", where its message starts: past "[Rank N] " (NCCL 2.28+) */
static const char *
message_start(const char *m, const char *eol)
{
    if (eol - m >= 8 && memcmp(m, "[Rank ", 6) == 0) {
        const char *q = m + 6;
        int k = 0;
        while (q < eol && *q >= '0' && *q <= '9' && k < 10) {
            q++;
            k++;
        }
        if (k >= 1 && k <= 9 && eol - q >= 2 && q[0] == ']' && q[1] == ' ')
            return q + 2;
    }
    return m;
}

static int
add_message(PyObject *messages, const char *tag, const char *eol, Py_ssize_t at)
{
    PyObject *key = PyBytes_FromStringAndSize(tag, eol - tag);
    if (key == NULL)
        return -1;
    PyObject *val = PyDict_GetItemWithError(messages, key); /* borrowed */
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
    int bad = val == NULL || PyDict_SetItem(messages, key, val) < 0;
    Py_XDECREF(val);
    Py_DECREF(key);
    return bad ? -1 : 0;
}

static int
append_pos(PyObject *list, Py_ssize_t at)
{
    PyObject *v = PyLong_FromSsize_t(at);
    int bad = v == NULL || PyList_Append(list, v) < 0;
    Py_XDECREF(v);
    return bad ? -1 : 0;
}

static PyObject *
tagged(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const char *s = view.buf;
    Py_ssize_t n = view.len;
    Py_ssize_t lines = 0, info = 0, warn = 0, trace = 0;
    PyObject *prefixes = PyDict_New(), *messages = PyDict_New(), *per_line = PyList_New(0), *marks = PyList_New(0);
    PyObject *warns = PyList_New(0);
    if (prefixes == NULL || messages == NULL || per_line == NULL || marks == NULL || warns == NULL)
        goto fail;
    const char *end = s + n;
    const char *line_start = s;  /* start of the line holding the scan position */
    int taken = 0;               /* the INFO/TRACE tags of the line read so far */
    int line_tagged = 0;         /* an INFO, WARN or TRACE tag seen on the line so far */
    int line_warned = 0;         /* the line's first WARN tag is recorded */
    const char *warn_end = s;    /* "NCCL WARN" overlaps itself ("NCCL WARNCCL WARN"): counted as count() does */
    const char *last_pre = NULL; /* the last prefix recorded, to skip the dict for a repeat */
    Py_ssize_t last_len = -1;
    const char *pos = s;
    while (pos < end) {
        const char *tag = find(pos, end - pos, "NCCL ", 5);
        const char *stop = tag ? tag : end;
        /* newlines before the tag: each starts a new line */
        const char *nl;
        while ((nl = memchr(pos, '\n', (size_t)(stop - pos))) != NULL) {
            lines++;
            line_start = nl + 1;
            taken = line_tagged = line_warned = 0;
            pos = nl + 1;
        }
        if (tag == NULL)
            break;
        Py_ssize_t left = end - tag;
        const char *msg = NULL; /* where an INFO/TRACE tag's text starts (the line's first TAGS_PER_LINE) */
        if (left >= 9 && memcmp(tag + 5, "INFO", 4) == 0) {
            info++;
            line_tagged = 1;
            if (left >= 10 && tag[9] == ' ')
                msg = tag + 10;
        } else if (left >= 9 && memcmp(tag + 5, "WARN", 4) == 0) {
            if (tag >= warn_end) {
                warn++;
                warn_end = tag + 9;
            }
            line_tagged = 1;
            if (!line_warned) {
                line_warned = 1;
                const char *eol = memchr(tag, '\n', (size_t)(end - tag));
                PyObject *w = Py_BuildValue("(nnnn)", tag - s, line_start - s, (eol ? eol : end) - s, lines);
                int bad = w == NULL || PyList_Append(warns, w) < 0;
                Py_XDECREF(w);
                if (bad)
                    goto fail;
            }
        } else if (left >= 10 && memcmp(tag + 5, "TRACE", 5) == 0) {
            trace++;
            line_tagged = 1;
            if (left >= 11 && tag[10] == ' ')
                msg = tag + 11;
        } else if (!line_tagged && ((left >= 12 && memcmp(tag + 5, "failure", 7) == 0) ||
                                    (left >= 10 && memcmp(tag + 5, "error", 5) == 0) ||
                                    (left >= 12 && memcmp(tag + 5, "version", 7) == 0))) {
            if (append_pos(marks, tag - s) < 0)
                goto fail;
        }
        if (msg != NULL && taken++ < TAGS_PER_LINE) {
            const char *eol = memchr(msg, '\n', (size_t)(end - msg));
            if (eol == NULL)
                eol = end;
            const char *m = message_start(msg, eol);
            if (eol - m >= 8 && memcmp(m, "NET/IB: ", 8) == 0) {
                if (append_pos(per_line, tag - s) < 0)
                    goto fail;
            } else if (add_message(messages, tag, (taken > 1 && eol - tag > LATER_TEXT_MAX) ? tag + LATER_TEXT_MAX : eol,
                                   tag - s) < 0) {
                goto fail;
            }
            if (taken == 1) {
                Py_ssize_t len = tag - line_start;
                if (len != last_len || memcmp(line_start, last_pre, (size_t)len) != 0) {
                    PyObject *key = prefix_key(line_start, len);
                    if (key == NULL || (key != Py_None && PyDict_SetDefault(prefixes, key, Py_None) == NULL)) {
                        Py_XDECREF(key);
                        goto fail;
                    }
                    Py_DECREF(key);
                    last_pre = line_start;
                    last_len = len;
                }
            }
        }
        pos = tag + 5; /* "NCCL " cannot overlap itself */
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(nnnnNNNNN)", lines, info, warn, trace, prefixes, messages, per_line, marks, warns);
fail:
    Py_XDECREF(warns);
    Py_XDECREF(prefixes);
    Py_XDECREF(messages);
    Py_XDECREF(per_line);
    Py_XDECREF(marks);
    PyBuffer_Release(&view);
    return NULL;
}

static int
has_tag(const char *a, const char *b)
{
    /* whether [a, b) holds " NCCL INFO " or " NCCL TRACE " */
    const char *p = a;
    while (p < b) {
        const char *t = find(p, b - p, " NCCL ", 6);
        if (t == NULL)
            return 0;
        Py_ssize_t left = b - t;
        if ((left >= 11 && memcmp(t + 6, "INFO ", 5) == 0) || (left >= 12 && memcmp(t + 6, "TRACE ", 6) == 0))
            return 1;
        p = t + 1;
    }
    return 0;
}

static int
ends_bare(const char *a, const char *b)
{
    /* whether the line [a, b) ends with " NCCL INFO " or " NCCL TRACE " and then only bytes outside
       "!".."~": the last printable byte ends the tag's word and the tag's space follows it */
    const char *q = b;
    while (q > a && !((unsigned char)q[-1] >= 0x21 && (unsigned char)q[-1] <= 0x7e))
        q--;
    if (q == b) /* nothing after the last printable byte: no tag space */
        return 0;
    /* q[-1] is the last printable byte; *q is the first byte after it (a space for a tag) */
    if (*q != ' ')
        return 0;
    Py_ssize_t n = q - a;
    return (n >= 10 && memcmp(q - 10, " NCCL INFO", 10) == 0) || (n >= 11 && memcmp(q - 11, " NCCL TRACE", 11) == 0);
}

static PyObject *
untagged(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const char *s = view.buf;
    const char *end = s + view.len;
    PyObject *keep = PyList_New(0), *picked = PyList_New(0);
    if (keep == NULL || picked == NULL)
        goto fail;
    Py_ssize_t i = 0;
    const char *a = s;
    for (;;) {
        const char *nl = memchr(a, '\n', (size_t)(end - a));
        const char *b = nl ? nl : end;
        if (nl == NULL && a == end && i > 0)
            break; /* the empty piece after a final "\n" */
        int want;
        if (b == a)
            want = 0;
        else if (!has_tag(a, b))
            want = 1;
        else
            want = ends_bare(a, b);
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

static PyMethodDef methods[] = {
    {"tagged", tagged, METH_O, "(lines, info, warn, trace, prefixes) of a chunk of an NCCL_DEBUG log"},
    {"untagged", untagged, METH_O, "(n, keep, picked): the lines the nccl-tests reader may act on"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cscan", NULL, -1, methods};

PyMODINIT_FUNC
PyInit__cscan(void)
{
    PyObject *m = PyModule_Create(&module);
    /* the limits the pure-Python twins must share (topodiag/scan/lines.py checks them) */
    if (m != NULL && (PyModule_AddIntConstant(m, "TAGS_PER_LINE", TAGS_PER_LINE) < 0 ||
                      PyModule_AddIntConstant(m, "LATER_TEXT_MAX", LATER_TEXT_MAX) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
