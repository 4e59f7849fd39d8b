/* The folding and cutting of a text, in C: memsync.cjk.to_index_text's hot path, its
 * normalize, and the shingles of near-duplicate detection (memsync.lifecycle.shingles).
 *
 * stream(text) gives exactly what memsync.cjk.stream_of gives (its pure-Python twin, kept as
 * the reference and as the fallback where this could not be built; tests compare the two on
 * every code point): each CJK character with the next one when that is CJK too (a bigram),
 * else alone; each run of other letters and digits whole, with the combining marks that follow
 * its letters (memsync.marks); nothing else; space-joined.
 * The index must get the same tokens whichever of the two made them: a contentless FTS5 row
 * is deleted by handing FTS5 its tokens again. The pattern in Python makes a str per token;
 * here the stream is written into one buffer (at 10,000 notes, 0.07 s against 0.98 s).
 *
 * fold_width(text) and lower(text) are memsync.cjk.normalize's passes either side of NFKC.
 *
 * shingle_values(text) gives the sorted, distinct CRC-32 values of the text's shingles, the
 * values memsync.lifecycle.shingles.shingles gives in Python (the reference, and the fallback):
 * Python makes a str, then bytes, then an int for each shingle, and shingling was half of an
 * audit's time. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

/* memsync.cjk._CJK_RANGES, in ascending order (a test checks they agree). */
static const Py_UCS4 CJK_RANGES[][2] = {
    {0x0E00, 0x0E7F}, {0x0E80, 0x0EFF}, {0x1000, 0x109F}, {0x1100, 0x11FF},
    {0x1780, 0x17FF}, {0x19E0, 0x19FF}, {0x3040, 0x30FF}, {0x3130, 0x318F},
    {0x31F0, 0x31FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA9E0, 0xA9FF},
    {0xAA60, 0xAA7F}, {0xAC00, 0xD7AF}, {0xF900, 0xFAFF}, {0x20000, 0x3134F},
};
#define N_RANGES (sizeof(CJK_RANGES) / sizeof(CJK_RANGES[0]))

static int is_cjk(Py_UCS4 c) {
    for (size_t i = 0; i < N_RANGES; i++) {
        if (c < CJK_RANGES[i][0]) return 0;
        if (c <= CJK_RANGES[i][1]) return 1;
    }
    return 0;
}

/* A letter or digit that is not CJK: re's [^\W_] for str, which is str.isalnum(). */
static int is_word(Py_UCS4 c) {
    if (c < 128) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    return Py_UNICODE_ISALNUM(c) && !is_cjk(c);
}

/* memsync.marks.RANGES, read from that module when this one loads: one table for both twins. */
static Py_UCS4 (*marks)[2] = NULL;
static Py_ssize_t n_marks = 0;

static int load_marks(void) {
    PyObject *module = PyImport_ImportModule("memsync.marks");
    if (module == NULL) return -1;
    PyObject *ranges = PyObject_GetAttrString(module, "RANGES");
    Py_DECREF(module);
    if (ranges == NULL) return -1;
    PyObject *seq = PySequence_Fast(ranges, "memsync.marks.RANGES is not a sequence");
    Py_DECREF(ranges);
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    marks = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(*marks));
    if (marks == NULL) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned long low, high;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "kk", &low, &high)) {
            Py_DECREF(seq);
            return -1;
        }
        marks[i][0] = (Py_UCS4)low;
        marks[i][1] = (Py_UCS4)high;
    }
    n_marks = n;
    Py_DECREF(seq);
    return 0;
}

/* A combining mark that is not CJK (a Thai vowel sign belongs to its run): kept in the word it
 * follows, as memsync.cjk._word does. Marks start at U+0300; the table is searched by halves. */
static int is_mark(Py_UCS4 c) {
    if (c < 0x0300 || is_cjk(c)) return 0;
    Py_ssize_t low = 0, high = n_marks - 1;
    while (low <= high) {
        Py_ssize_t mid = (low + high) / 2;
        if (c < marks[mid][0]) high = mid - 1;
        else if (c > marks[mid][1]) low = mid + 1;
        else return 1;
    }
    return 0;
}

static PyObject *stream(PyObject *module, PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "stream() takes a str");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_UCS4 *in = PyUnicode_AsUCS4Copy(text);
    if (in == NULL) return NULL;
    /* At most three characters out for one in: a bigram and its space. */
    Py_UCS4 *out = PyMem_New(Py_UCS4, 3 * (size_t)n + 1);
    if (out == NULL) {
        PyMem_Free(in);
        return PyErr_NoMemory();
    }
    Py_ssize_t w = 0, i = 0;
    while (i < n) {
        Py_UCS4 c = in[i];
        if (is_cjk(c)) {
            if (w) out[w++] = ' ';
            out[w++] = c;
            if (i + 1 < n && is_cjk(in[i + 1])) out[w++] = in[i + 1];
            i++;
        } else if (is_word(c)) {
            if (w) out[w++] = ' ';
            while (i < n && (is_word(in[i]) || is_mark(in[i]))) out[w++] = in[i++];
        } else {
            i++;
        }
    }
    /* Narrowed to the smallest kind that holds it, as every str must be. */
    PyObject *result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, w);
    PyMem_Free(in);
    PyMem_Free(out);
    return result;
}

/* CRC-32 as zlib.crc32 computes it (reflected polynomial 0xEDB88320): the values must be the
 * ones the Python twin gets, whichever side made them. The table is filled at import. */
static uint32_t CRC_TABLE[256];

static void fill_crc_table(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        CRC_TABLE[n] = c;
    }
}

static uint32_t crc_byte(uint32_t crc, unsigned char b) {
    return CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8);
}

/* The running CRC after the UTF-8 bytes of characters [from, to) of the text. No surrogate
 * reaches here: a shingle holds letters, digits and CJK characters only. */
static uint32_t crc_chars(uint32_t crc, int kind, const void *data, Py_ssize_t from, Py_ssize_t to) {
    for (Py_ssize_t i = from; i < to; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x80) {
            crc = crc_byte(crc, (unsigned char)c);
        } else if (c < 0x800) {
            crc = crc_byte(crc, (unsigned char)(0xC0 | (c >> 6)));
            crc = crc_byte(crc, (unsigned char)(0x80 | (c & 0x3F)));
        } else if (c < 0x10000) {
            crc = crc_byte(crc, (unsigned char)(0xE0 | (c >> 12)));
            crc = crc_byte(crc, (unsigned char)(0x80 | ((c >> 6) & 0x3F)));
            crc = crc_byte(crc, (unsigned char)(0x80 | (c & 0x3F)));
        } else {
            crc = crc_byte(crc, (unsigned char)(0xF0 | (c >> 18)));
            crc = crc_byte(crc, (unsigned char)(0x80 | ((c >> 12) & 0x3F)));
            crc = crc_byte(crc, (unsigned char)(0x80 | ((c >> 6) & 0x3F)));
            crc = crc_byte(crc, (unsigned char)(0x80 | (c & 0x3F)));
        }
    }
    return crc;
}

/* Sorts values[0:n] ascending, a byte at a time from the lowest (four stable counting passes),
 * using spare[0:n]: for a card's thousand values several times quicker than qsort. */
static void radix_sort(uint32_t *values, uint32_t *spare, Py_ssize_t n) {
    for (int shift = 0; shift < 32; shift += 8) {
        Py_ssize_t at[256] = {0};
        for (Py_ssize_t k = 0; k < n; k++) at[(values[k] >> shift) & 0xFF]++;
        for (Py_ssize_t b = 0, total = 0; b < 256; b++) {
            Py_ssize_t count = at[b];
            at[b] = total;
            total += count;
        }
        for (Py_ssize_t k = 0; k < n; k++) spare[at[(values[k] >> shift) & 0xFF]++] = values[k];
        uint32_t *swap = values;
        values = spare;
        spare = swap;
    }
}

/* Room for the shingles of a text of n characters, and as much again for the sort. There is at
 * most one shingle per character: a word pair per word after the first, a trigram per character
 * of a run but its last two (or the run, of one or two). Kept from one call to the next (the
 * GIL is held throughout a call), unless a long text made it large. */
#define SCRATCH_KEPT (1 << 18)  /* values: 1 MiB, room for a text of 131,072 characters */
static uint32_t *scratch = NULL;
static size_t scratch_size = 0;

static uint32_t *scratch_for(Py_ssize_t n) {
    size_t wanted = 2 * (n > 0 ? (size_t)n : 1);
    if (wanted > scratch_size) {
        uint32_t *grown = PyMem_Realloc(scratch, wanted * sizeof(uint32_t));
        if (grown == NULL) return NULL;
        scratch = grown;
        scratch_size = wanted;
    }
    return scratch;
}

/* The shingles of memsync.lifecycle.shingles.grams: each two words one after the other joined by
 * a space (the words of the whole text, CJK runs between them or not), the one word of a text
 * that has only one, each three characters of a CJK run (a run shorter than three whole). */
static PyObject *shingle_values(PyObject *module, PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "shingle_values() takes a str");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    uint32_t *out = scratch_for(n);
    if (out == NULL) return PyErr_NoMemory();
    Py_ssize_t w = 0, i = 0, words = 0, last_start = 0, last_end = 0;
    while (i < n) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        Py_ssize_t start = i;
        if (is_cjk(c)) {
            while (i < n && is_cjk(PyUnicode_READ(kind, data, i))) i++;
            if (i - start < 3) {
                out[w++] = ~crc_chars(0xFFFFFFFFu, kind, data, start, i);
            } else {
                for (Py_ssize_t k = start; k + 3 <= i; k++)
                    out[w++] = ~crc_chars(0xFFFFFFFFu, kind, data, k, k + 3);
            }
        } else if (is_word(c)) {
            while (i < n && (is_word(PyUnicode_READ(kind, data, i)) || is_mark(PyUnicode_READ(kind, data, i)))) i++;
            if (words) {
                uint32_t crc = crc_chars(0xFFFFFFFFu, kind, data, last_start, last_end);
                crc = crc_byte(crc, ' ');
                out[w++] = ~crc_chars(crc, kind, data, start, i);
            }
            words++;
            last_start = start;
            last_end = i;
        } else {
            i++;
        }
    }
    if (words == 1) out[w++] = ~crc_chars(0xFFFFFFFFu, kind, data, last_start, last_end);
    radix_sort(out, out + (n > 0 ? n : 1), w);  /* an even number of passes: sorted in place */
    Py_ssize_t kept = 0;
    for (Py_ssize_t k = 0; k < w; k++)
        if (kept == 0 || out[k] != out[kept - 1]) out[kept++] = out[k];
    PyObject *result = PyBytes_FromStringAndSize((const char *)out, kept * (Py_ssize_t)sizeof(uint32_t));
    if (scratch_size > SCRATCH_KEPT) {  /* not held for the rest of a process */
        PyMem_Free(scratch);
        scratch = NULL;
        scratch_size = 0;
    }
    return result;
}

/* memsync.cjk.normalize's two passes over a text that is not ASCII, either side of NFKC (which
 * unicodedata does, and which only checks a text already in that form): in Python a regular
 * expression looking for full-width forms and str.lower were most of its time. */

/* A str's length, with its kind and data; -1 (a TypeError set) for anything else. */
static Py_ssize_t str_parts(PyObject *text, const char *what, int *kind, const void **data) {
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "%s() takes a str", what);
        return -1;
    }
    *kind = PyUnicode_KIND(text);
    *data = PyUnicode_DATA(text);
    return PyUnicode_GET_LENGTH(text);
}

static int full_width(Py_UCS4 c) { return (c >= 0xFF01 && c <= 0xFF5E) || c == 0x3000; }

/* fold_width(text): the full-width ASCII forms (U+FF01..FF5E) and the ideographic space as the
 * ASCII characters NFKC makes of them, every other character as it is (the same object when
 * there are none). Their decompositions are fixed by Unicode's stability policy. */
static PyObject *fold_width(PyObject *module, PyObject *text) {
    int kind;
    const void *data;
    Py_ssize_t n = str_parts(text, "fold_width", &kind, &data), i = 0;
    if (n < 0) return NULL;
    if (kind != PyUnicode_1BYTE_KIND)  /* a text of Latin-1 holds none of them */
        while (i < n && !full_width(PyUnicode_READ(kind, data, i))) i++;
    else
        i = n;
    if (i == n)  /* a plain str, as re.sub gives, even for a subclass */
        return PyUnicode_CheckExact(text) ? Py_NewRef(text) : PyUnicode_FromKindAndData(kind, data, n);
    Py_UCS4 *out = PyMem_New(Py_UCS4, (size_t)n + 1);
    if (out == NULL) return PyErr_NoMemory();
    for (i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        out[i] = !full_width(c) ? c : c == 0x3000 ? 0x20 : c - 0xFEE0;
    }
    /* narrowed to the smallest kind that holds it: "ＡＢ" folds to ASCII */
    PyObject *result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, n);
    PyMem_Free(out);
    return result;
}

/* lower(text): text.lower(). Most characters of a text that is not ASCII have no case (CJK) or
 * are lower case already (their lower case is themselves): those stay, ASCII capitals are
 * lowered here, and a text holding any other character (a capital beyond ASCII, among them Σ,
 * whose lower case depends on its neighbours, and İ, whose is two characters) is lowered by
 * str.lower itself. The case data is CPython's own, so the answer follows the Unicode version
 * of the Python that runs it; a test compares the two on every code point. */
static PyObject *lower(PyObject *module, PyObject *text) {
    int kind, capitals = 0;
    const void *data;
    Py_ssize_t n = str_parts(text, "lower", &kind, &data);
    if (n < 0) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= 'A' && c <= 'Z')
            capitals = 1;
        else if (c >= 0x80 && Py_UNICODE_TOLOWER(c) != c)
            return PyObject_CallMethod(text, "lower", NULL);
    }
    if (!capitals && PyUnicode_CheckExact(text)) return Py_NewRef(text);
    /* only ASCII letters change, so the widest character, and with it the kind, stays */
    PyObject *result = PyUnicode_New(n, PyUnicode_MAX_CHAR_VALUE(text));
    if (result == NULL) return NULL;
    void *out = PyUnicode_DATA(result);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        PyUnicode_WRITE(kind, out, i, (c >= 'A' && c <= 'Z') ? c + 32 : c);
    }
    return result;
}

static PyMethodDef methods[] = {
    {"stream", stream, METH_O, "The space-joined tokens of a folded text (memsync.cjk.stream_of)."},
    {"shingle_values", shingle_values, METH_O,
     "The sorted, distinct CRC-32 values of a folded text's shingles, as native 32-bit ints."},
    {"fold_width", fold_width, METH_O, "Full-width ASCII forms and U+3000 as NFKC makes them."},
    {"lower", lower, METH_O, "str.lower(), in one pass where only ASCII letters change."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "memsync._tokenstream",
    "memsync.cjk.stream_of, normalize's passes and the shingles' values in C, where they could be built.",
    -1, methods,
};

PyMODINIT_FUNC PyInit__tokenstream(void) {
    fill_crc_table();
    if (marks == NULL && load_marks() < 0) return NULL;
    return PyModule_Create(&module);
}
