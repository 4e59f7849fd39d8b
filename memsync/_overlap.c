/* How much cards' shingles overlap, in C: the two loops of near-duplicate detection
 * (memsync.lifecycle.shingles) that count integers, where Python spends most of its time boxing
 * them. Each has a pure-Python twin there, the reference and the fallback where this could not
 * be built; tests compare the two.
 *
 * candidates(heads, starts, shared, limit): card j's sketch is heads[starts[j] : starts[j + 1]].
 * A value in the sketches of more than `limit` cards is no evidence. For each card j, in order,
 * the cards i < j whose sketches share at least min(shared, len(sketch i), len(sketch j)) of
 * the other values, as 32-bit values in bytes: j, how many, then those i ascending; cards with
 * none left out. At 100,000 cards that is about 100 million counts of a card met in a bucket,
 * 12 s in Python (a Counter per card), a fraction of a second here.
 *
 * common(a, b): how many values two ascending arrays of distinct 32-bit values share (the
 * intersection's size of two cards' packed shingles). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int ascending(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int check_words(const Py_buffer *buffer, const char *name) {
    if (buffer->len % 4) {
        PyErr_Format(PyExc_ValueError, "%s: a buffer of 32-bit values was expected", name);
        return -1;
    }
    return 0;
}

/* A growing list of 32-bit values: what candidates() returns, as bytes. */
typedef struct {
    uint32_t *items;
    size_t used, size;
} Words;

static int put(Words *out, uint32_t value) {
    if (out->used == out->size) {
        size_t size = out->size ? 2 * out->size : 1024;
        uint32_t *grown = PyMem_RawRealloc(out->items, size * sizeof(uint32_t));
        if (grown == NULL) return -1;
        out->items = grown;
        out->size = size;
    }
    out->items[out->used++] = value;
    return 0;
}

/* The distinct values of the sketches, ascending, and how many sketches hold each: `values`
 * sorted in place, then each run kept once. Returns how many there are. */
static size_t tally(uint32_t *values, size_t m, uint32_t *counts) {
    qsort(values, m, sizeof(uint32_t), ascending);
    size_t u = 0;
    for (size_t e = 0; e < m; e++) {
        if (u && values[u - 1] == values[e]) {
            counts[u - 1]++;
        } else {
            values[u] = values[e];
            counts[u++] = 1;
        }
    }
    return u;
}

/* Where `value` stands among the distinct values (it is one of them). */
static size_t rank(const uint32_t *distinct, size_t u, uint32_t value) {
    size_t low = 0, high = u;
    while (high - low > 1) {
        size_t mid = low + (high - low) / 2;
        if (distinct[mid] <= value) low = mid;
        else high = mid;
    }
    return low;
}

/* Each evidence value's bucket holds the cards so far whose sketches have it, the buckets laid
 * out one after the other (a bucket's room is its value's count, known before). Card j counts,
 * for every earlier card, the buckets of its values that hold it, then joins those buckets.
 * Runs without the GIL (a second at 100,000 cards an MCP server's other threads need not wait
 * for), so it touches no Python object and allocates with the raw allocators. */
static int count_candidates(const uint32_t *heads, const uint32_t *starts, size_t n,
                            size_t shared, size_t limit, Words *out) {
    size_t m = starts[n], u = 0;
    int failed = -1;
    uint32_t *distinct = PyMem_RawMalloc((m + 1) * sizeof(uint32_t));
    uint32_t *counts = PyMem_RawMalloc((m + 1) * sizeof(uint32_t));
    uint32_t *room = NULL, *filled = NULL, *buckets = NULL, *met = NULL, *touched = NULL;
    if (!distinct || !counts) goto done;
    memcpy(distinct, heads, m * sizeof(uint32_t));
    u = tally(distinct, m, counts);
    room = PyMem_RawCalloc(u + 1, sizeof(uint32_t));
    filled = PyMem_RawCalloc(u + 1, sizeof(uint32_t));
    met = PyMem_RawCalloc(n + 1, sizeof(uint32_t));
    touched = PyMem_RawCalloc(n + 1, sizeof(uint32_t));
    if (!room || !filled || !met || !touched) goto done;
    for (size_t v = 0; v < u; v++) {  /* a value in one sketch, or in too many, is no evidence */
        int evidence = counts[v] > 1 && counts[v] <= limit;
        room[v + 1] = room[v] + (evidence ? counts[v] : 0);
        filled[v] = room[v];
    }
    buckets = PyMem_RawMalloc((room[u] + 1) * sizeof(uint32_t));
    if (!buckets) goto done;
    for (size_t j = 0; j < n; j++) {
        size_t n_touched = 0, n_found = 0, length = starts[j + 1] - starts[j];
        for (size_t e = starts[j]; e < starts[j + 1]; e++) {
            size_t v = rank(distinct, u, heads[e]);
            if (room[v] == room[v + 1]) continue;  /* no bucket: not evidence */
            for (uint32_t at = room[v]; at < filled[v]; at++) {
                uint32_t i = buckets[at];
                if (met[i]++ == 0) touched[n_touched++] = i;
            }
            buckets[filled[v]++] = (uint32_t)j;
        }
        size_t want_j = length < shared ? length : shared;
        for (size_t k = 0; k < n_touched; k++) {
            uint32_t i = touched[k];
            size_t length_i = starts[i + 1] - starts[i];
            size_t need = length_i < want_j ? length_i : want_j;
            if (met[i] >= need) touched[n_found++] = i;  /* overwrites only what was read */
            met[i] = 0;
        }
        if (n_found) {
            qsort(touched, n_found, sizeof(uint32_t), ascending);
            if (put(out, (uint32_t)j) < 0 || put(out, (uint32_t)n_found) < 0) goto done;
            for (size_t k = 0; k < n_found; k++)
                if (put(out, touched[k]) < 0) goto done;
        }
    }
    failed = 0;
done:
    PyMem_RawFree(distinct);
    PyMem_RawFree(counts);
    PyMem_RawFree(room);
    PyMem_RawFree(filled);
    PyMem_RawFree(buckets);
    PyMem_RawFree(met);
    PyMem_RawFree(touched);
    return failed;
}

static PyObject *candidates(PyObject *module, PyObject *args) {
    Py_buffer heads, starts;
    Py_ssize_t shared, limit;
    if (!PyArg_ParseTuple(args, "y*y*nn", &heads, &starts, &shared, &limit)) return NULL;
    PyObject *result = NULL;
    Words out = {NULL, 0, 0};
    const uint32_t *s = starts.buf;
    Py_ssize_t m = heads.len / 4, n = starts.len / 4 - 1;
    if (check_words(&heads, "heads") < 0 || check_words(&starts, "starts") < 0) goto done;
    if (n < 0 || shared < 0 || limit < 0 || m > UINT32_MAX - 1 || n > UINT32_MAX - 1) {
        PyErr_SetString(PyExc_ValueError,
                        "candidates: starts needs an entry more than there are cards; shared and limit >= 0");
        goto done;
    }
    if (s[0] != 0 || s[n] != (uint64_t)m) {
        PyErr_SetString(PyExc_ValueError, "candidates: starts must run from 0 to len(heads)");
        goto done;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        if (s[j] > s[j + 1]) {
            PyErr_SetString(PyExc_ValueError, "candidates: starts must not decrease");
            goto done;
        }
    }
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = count_candidates(heads.buf, s, (size_t)n, (size_t)shared, (size_t)limit, &out);
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyBytes_FromStringAndSize((const char *)out.items, (Py_ssize_t)(out.used * sizeof(uint32_t)));
done:
    PyMem_RawFree(out.items);
    PyBuffer_Release(&heads);
    PyBuffer_Release(&starts);
    return result;
}

static PyObject *common(PyObject *module, PyObject *args) {
    Py_buffer a, b;
    if (!PyArg_ParseTuple(args, "y*y*", &a, &b)) return NULL;
    PyObject *out = NULL;
    if (check_words(&a, "a") == 0 && check_words(&b, "b") == 0) {
        const uint32_t *x = a.buf, *y = b.buf;
        Py_ssize_t nx = a.len / 4, ny = b.len / 4, i = 0, j = 0, shared = 0;
        while (i < nx && j < ny) {
            if (x[i] < y[j]) i++;
            else if (x[i] > y[j]) j++;
            else {
                shared++;
                i++;
                j++;
            }
        }
        out = PyLong_FromSsize_t(shared);
    }
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return out;
}

static PyMethodDef methods[] = {
    {"candidates", candidates, METH_VARARGS,
     "For each card, the earlier cards whose sketches share enough values: j, how many, i, ..."},
    {"common", common, METH_VARARGS, "How many values two ascending arrays of distinct values share."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "memsync._overlap",
    "The overlap counts of memsync.lifecycle.shingles in C, where they could be built.", -1, methods,
};

PyMODINIT_FUNC PyInit__overlap(void) { return PyModule_Create(&module); }
