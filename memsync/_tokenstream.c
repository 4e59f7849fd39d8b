/* The token stream of a folded document text, in C: memsync.cjk.to_index_text's hot path.
 *
 * stream(text) gives exactly what memsync.cjk.stream_of gives (its pure-Python twin, kept as
 * the reference and as the fallback where this could not be built; tests compare the two on
 * every code point): each CJK character with the next one when that is CJK too (a bigram),
 * else alone; each run of other letters and digits whole; nothing else; space-joined.
 * The index must get the same tokens whichever of the two made them: a contentless FTS5 row
 * is deleted by handing FTS5 its tokens again. The pattern in Python makes a str per token;
 * here the stream is written into one buffer (at 10,000 notes, 0.07 s against 0.98 s). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* memsync.cjk._CJK_RANGES, in ascending order (a test checks they agree). */
static const Py_UCS4 CJK_RANGES[][2] = {
    {0x1100, 0x11FF}, {0x3040, 0x30FF}, {0x3130, 0x318F}, {0x31F0, 0x31FF},
    {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xAC00, 0xD7AF}, {0xF900, 0xFAFF},
    {0x20000, 0x3134F},
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
            while (i < n && is_word(in[i])) out[w++] = in[i++];
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

static PyMethodDef methods[] = {
    {"stream", stream, METH_O, "The space-joined tokens of a folded text (memsync.cjk.stream_of)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "memsync._tokenstream",
    "memsync.cjk.stream_of in C, where it could be built.", -1, methods,
};

PyMODINIT_FUNC PyInit__tokenstream(void) { return PyModule_Create(&module); }
