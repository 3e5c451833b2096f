/*
 * rankmeter.data._native: the inner loops of reading and joining a run, compiled: string
 * hashes, the judged-pair lookup, the duplicate check, trec_eval's tie order, interning, and
 * the scanner of run pieces in the common layout; and the diversity metrics' loops over
 * (item, key) pairs: running key counts within segments, and a greedy ordering by keys.
 *
 * Each function computes exactly what its NumPy (or Arrow) twin in rankmeter/data computes (the
 * diversity loops': rankmeter/metrics/_subtopic_pairs.py), and tests/data/test_native.py,
 * tests/io/test_scan.py and tests/metrics/test_diversity_native.py compare the two on random
 * input; the Python code stays the fallback wherever this module was not built. Inputs and outputs are
 * contiguous buffers (NumPy arrays, Arrow buffers), so no NumPy headers are needed to build
 * it, and every loop runs without the GIL: the reader's threads keep parsing meanwhile.
 *
 * Plain C99 and the limited set of the CPython API that every platform's compiler takes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#if defined(_MSC_VER)
#include <intrin.h>
#endif
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The constants of hashing.py's string hashes: _STEP and _MIX_1. */
#define STEP UINT64_C(0x9E3779B97F4A7C15)
#define MIX_1 UINT64_C(0xBF58476D1CE4E5B9)
/* find_keys scans a segment's keys where they lie when they are this few or fewer (the
 * module's SCAN_SPAN, which KeyTable reads to know when it needs no table). */
#define SCAN_SPAN 16

/* The little-endian word of the n bytes (1..8) at p, zero-padded above them. */
static inline uint64_t
load_word(const unsigned char *p, Py_ssize_t n)
{
    uint64_t word = 0;
    if (n >= 8) {
#if PY_BIG_ENDIAN
        for (int k = 7; k >= 0; k--) word = (word << 8) | p[k];
#else
        memcpy(&word, p, 8);
#endif
    }
    else {
        for (Py_ssize_t k = n - 1; k >= 0; k--) word = (word << 8) | p[k];
    }
    return word;
}

/* Whether view holds count items of item bytes. count is -1 where the caller's count
 * overflowed (see counted); item * count is never formed where it could overflow. */
static int
check_size(Py_buffer *view, Py_ssize_t item, Py_ssize_t count, const char *what)
{
    if (count < 0 || count > view->len / item) {
        if (count >= 0 && count <= PY_SSIZE_T_MAX / item)
            PyErr_Format(PyExc_ValueError, "%s: %zd bytes, %zd needed", what, view->len,
                         item * count);
        else
            PyErr_Format(PyExc_ValueError, "%s: %zd bytes, more needed", what, view->len);
        return -1;
    }
    return 0;
}

/* first + n + 1, the offsets that n strings from first need; -1 when that overflows (or
 * either is negative), which check_size refuses. */
static Py_ssize_t
counted(Py_ssize_t first, Py_ssize_t n)
{
    if (first < 0 || n < 0 || first > PY_SSIZE_T_MAX - 1 - n) return -1;
    return first + n + 1;
}

/* hash_strings(offsets, wide, first, n, data, out): string_hashes of n strings whose
 * offsets (int32, or int64 when wide) begin at offsets[first]. */
static PyObject *
hash_strings(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer offsets, data, out;
    int wide;
    Py_ssize_t first, n;
    if (!PyArg_ParseTuple(args, "y*pnny*w*", &offsets, &wide, &first, &n, &data, &out))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t item = wide ? 8 : 4;
    if (check_size(&offsets, item, counted(first, n), "offsets") < 0 ||
        check_size(&out, 8, n, "out") < 0)
        goto done;
    const unsigned char *bytes = (const unsigned char *)data.buf;
    uint64_t *hashes = (uint64_t *)out.buf;
    const int32_t *narrow = (const int32_t *)offsets.buf + first;
    const int64_t *broad = (const int64_t *)offsets.buf + first;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t start = wide ? broad[i] : narrow[i];
        int64_t stop = wide ? broad[i + 1] : narrow[i + 1];
        if (start < 0 || stop < start || stop > data.len) {
            bad = 1;
            break;
        }
        int64_t length = stop - start;
        uint64_t state = (uint64_t)length * STEP;
        const unsigned char *p = bytes + start;
        for (int64_t k = 0; k < length; k += 8) {
            int64_t left = length - k;
            state = (state ^ load_word(p + k, left < 8 ? left : 8)) * STEP;
        }
        state ^= state >> 32;
        hashes[i] = state * MIX_1;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "string offsets outside the data buffer");
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    PyBuffer_Release(&out);
    return result;
}

/* find_keys(table, shift, ordered, order, keys, probes, segments, adds, skip, spans,
 *           out_at, out_index):
 * KeyTable.find. The probe i is probes[i], plus adds[s] for the segment s holding i when
 * segments (int64 CSR offsets over the probes) are given (an empty buffer: none); a segment
 * whose skip byte is set is never found. spans (int64 pairs, one per segment, or empty) say
 * which keys a segment's probes can equal, keys[low:high] (the judgments of its query): a
 * short span is scanned where it lies, in cache, instead of probing the table. Returns how
 * many probes were found; their indices (ascending) and the index of the equal key are
 * written out. */
static PyObject *
find_keys(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer table, ordered, order, keys, probes, segments, adds, skip, spans, out_at,
        out_index;
    unsigned int shift;
    if (!PyArg_ParseTuple(args, "y*Iy*y*y*y*y*y*y*y*w*w*", &table, &shift, &ordered, &order,
                          &keys, &probes, &segments, &adds, &skip, &spans, &out_at, &out_index))
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n_keys = keys.len / 8;
    Py_ssize_t n_probes = probes.len / 8;
    Py_ssize_t n_slots = table.len / 4;
    Py_ssize_t n_segments = segments.len ? segments.len / 8 - 1 : 0;
    if (segments.len && (segments.len % 8 != 0 || n_segments < 1)) {
        /* (a count of -1 or 0 here read offsets past the buffer) */
        PyErr_Format(PyExc_ValueError,
                     "segments: %zd bytes, not whole int64 offsets (at least 2)", segments.len);
        goto done;
    }
    /* An empty table: every probe is scanned in its span (the caller checked they are short). */
    int have_table = table.len > 0;
    if (shift < 40 || shift > 63 || (have_table && ((Py_ssize_t)1 << (64 - shift)) > n_slots) ||
        (have_table && (check_size(&ordered, 8, n_keys, "ordered") < 0 ||
                        check_size(&order, 8, n_keys, "order") < 0)) ||
        check_size(&out_at, 8, n_probes, "out_at") < 0 ||
        check_size(&out_index, 8, n_probes, "out_index") < 0 ||
        (segments.len && (check_size(&adds, 8, n_segments, "adds") < 0 ||
                          check_size(&skip, 1, n_segments, "skip") < 0)) ||
        (spans.len && check_size(&spans, 16, n_segments, "spans") < 0)) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad table shift");
        goto done;
    }
    const int32_t *slots = (const int32_t *)table.buf;
    const uint64_t *sorted_keys = (const uint64_t *)ordered.buf;
    const int64_t *sorted_order = (const int64_t *)order.buf;
    const uint64_t *key = (const uint64_t *)keys.buf;
    const uint64_t *probe = (const uint64_t *)probes.buf;
    const int64_t *bounds = (const int64_t *)segments.buf;
    const uint64_t *add = (const uint64_t *)adds.buf;
    const unsigned char *skipped = (const unsigned char *)skip.buf;
    const int64_t *span = spans.len ? (const int64_t *)spans.buf : NULL;
    int64_t *found_at = (int64_t *)out_at.buf;
    int64_t *found_index = (int64_t *)out_index.buf;
    Py_ssize_t found = 0;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t segment = 0, segment_end = n_segments ? bounds[1] : n_probes;
    uint64_t plus = n_segments ? add[0] : 0;
    int skipping = n_segments ? skipped[0] : 0;
    int64_t low_key = 0, high_key = 0, scan = 0;
    if (n_segments && (bounds[0] != 0 || bounds[n_segments] != n_probes)) bad = 1;
    if (span != NULL && n_segments) {
        low_key = span[0];
        high_key = span[1];
        scan = high_key - low_key <= SCAN_SPAN;
        if (low_key < 0 || high_key < low_key || high_key > n_keys) bad = 1;
    }
    for (Py_ssize_t i = 0; i < n_probes && !bad; i++) {
        while (n_segments && i >= segment_end) {
            segment++;
            if (segment >= n_segments) {
                bad = 1;
                break;
            }
            segment_end = bounds[segment + 1];
            plus = add[segment];
            skipping = skipped[segment];
            if (span != NULL) {
                low_key = span[2 * segment];
                high_key = span[2 * segment + 1];
                scan = high_key - low_key <= SCAN_SPAN;
                if (low_key < 0 || high_key < low_key || high_key > n_keys) bad = 1;
            }
        }
        if (bad) break;
        if (skipping) {
            i = segment_end - 1;
            continue;
        }
        uint64_t wanted = probe[i] + plus;
        if (scan) {
            for (int64_t k = low_key; k < high_key; k++) {
                if (key[k] == wanted) {
                    found_at[found] = i;
                    found_index[found] = k;
                    found++;
                    break;
                }
            }
            continue;
        }
        if (!have_table) {
            bad = 1;
            break;
        }
        int32_t slot = slots[wanted >> shift];
        if (slot == 0) continue;
        int64_t index;
        if (slot > 0) {
            index = slot - 1;
        }
        else { /* a slot several keys share: binary search among the sorted keys */
            if (n_keys == 0) { /* (there is no key to fall back on) */
                bad = 1;
                break;
            }
            Py_ssize_t low = 0, high = n_keys;
            while (low < high) {
                Py_ssize_t mid = low + (high - low) / 2;
                if (sorted_keys[mid] < wanted) low = mid + 1;
                else high = mid;
            }
            if (low >= n_keys) low = n_keys - 1;
            index = sorted_order[low];
        }
        if (index < 0 || index >= n_keys) {
            bad = 1;
            break;
        }
        if (key[index] == wanted) {
            found_at[found] = i;
            found_index[found] = index;
            found++;
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "inconsistent key table or segments");
        goto done;
    }
    result = PyLong_FromSsize_t(found);
done:
    PyBuffer_Release(&table);
    PyBuffer_Release(&ordered);
    PyBuffer_Release(&order);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&probes);
    PyBuffer_Release(&segments);
    PyBuffer_Release(&adds);
    PyBuffer_Release(&skip);
    PyBuffer_Release(&spans);
    PyBuffer_Release(&out_at);
    PyBuffer_Release(&out_index);
    return result;
}

/* segments_repeat(offsets, keys): whether some segment keys[offsets[i]:offsets[i+1]] holds a
 * value twice. Each segment goes into an open-addressing table on the keys' upper bits (the
 * keys are well mixed); a stamp per slot says which segment filled it, so the table is
 * cleared once, not once per segment. */
static PyObject *
segments_repeat(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer offsets, keys;
    if (!PyArg_ParseTuple(args, "y*y*", &offsets, &keys)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n_segments = offsets.len / 8 - 1;
    Py_ssize_t n_keys = keys.len / 8;
    const int64_t *bounds = (const int64_t *)offsets.buf;
    const uint64_t *key = (const uint64_t *)keys.buf;
    int64_t longest = 0;
    int bad = 0;
    for (Py_ssize_t s = 0; s < n_segments && !bad; s++) {
        int64_t length = bounds[s + 1] - bounds[s];
        if (bounds[s] < 0 || length < 0 || bounds[s + 1] > n_keys) bad = 1;
        else if (length > longest) longest = length;
    }
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "segment offsets outside the keys");
        goto done;
    }
    int repeats = 0;
    if (longest >= 2) {
        int bits = 4;
        while (((int64_t)1 << bits) < 2 * longest) bits++;
        size_t size = (size_t)1 << bits, mask = size - 1;
        uint64_t *slot_key = (uint64_t *)malloc(size * sizeof(uint64_t));
        uint32_t *stamp = (uint32_t *)calloc(size, sizeof(uint32_t));
        if (slot_key == NULL || stamp == NULL) {
            free(slot_key);
            free(stamp);
            PyErr_NoMemory();
            goto done;
        }
        Py_BEGIN_ALLOW_THREADS
        uint32_t current = 0;
        for (Py_ssize_t s = 0; s < n_segments && !repeats; s++) {
            int64_t start = bounds[s], stop = bounds[s + 1];
            if (stop - start < 2) continue;
            if (++current == 0) { /* the stamps wrapped: clear them */
                memset(stamp, 0, size * sizeof(uint32_t));
                current = 1;
            }
            for (int64_t i = start; i < stop; i++) {
                uint64_t value = key[i];
                size_t at = (size_t)(value >> (64 - bits));
                while (stamp[at] == current) {
                    if (slot_key[at] == value) {
                        repeats = 1;
                        break;
                    }
                    at = (at + 1) & mask;
                }
                if (repeats) break;
                stamp[at] = current;
                slot_key[at] = value;
            }
        }
        Py_END_ALLOW_THREADS
        free(slot_key);
        free(stamp);
    }
    result = PyBool_FromLong(repeats);
done:
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&keys);
    return result;
}

/* The doc ids of a tie block, for sorting: where each one's bytes are. */
typedef struct {
    const unsigned char *bytes;
    int64_t length;
    int64_t position;
} Doc;

/* Whether a sorts before b in the tie policy's order: doc id descending in byte order (a
 * shorter id that is a prefix of the other is the smaller). */
static inline int
goes_first(const Doc *a, const Doc *b)
{
    int64_t shorter = a->length < b->length ? a->length : b->length;
    int order = shorter ? memcmp(a->bytes, b->bytes, (size_t)shorter) : 0;
    if (order == 0) return a->length > b->length;
    return order > 0;
}

/* A stable sort of docs[0:n] by goes_first (insertion sort for a few, merging beyond). */
static void
sort_docs(Doc *docs, Doc *spare, Py_ssize_t n)
{
    if (n <= 12) {
        for (Py_ssize_t i = 1; i < n; i++) {
            Doc moving = docs[i];
            Py_ssize_t j = i;
            while (j > 0 && goes_first(&moving, &docs[j - 1])) {
                docs[j] = docs[j - 1];
                j--;
            }
            docs[j] = moving;
        }
        return;
    }
    Py_ssize_t half = n / 2;
    sort_docs(docs, spare, half);
    sort_docs(docs + half, spare, n - half);
    memcpy(spare, docs, (size_t)half * sizeof(Doc));
    Py_ssize_t i = 0, j = half, k = 0;
    while (i < half && j < n) {
        /* Equal ids keep their order: the right one goes first only when strictly first. */
        if (goes_first(&docs[j], &spare[i])) docs[k++] = docs[j++];
        else docs[k++] = spare[i++];
    }
    while (i < half) docs[k++] = spare[i++];
}

/* tie_moves(codes, scores, order, rows, doc_offsets, wide, first, data, out_at, out_from):
 * the moves that put equal scores of one query in doc id order, descending (_rank_order's
 * trec_eval tie policy). Position p holds row order[p] (order empty: row p); rows[r] is the
 * doc id of row r (an index into the string array whose offsets begin at
 * doc_offsets[first]). Writes x[out_at[k]] = x[out_from[k]] moves; returns their count. */
static PyObject *
tie_moves(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer codes, scores, order, rows, offsets, data, out_at, out_from;
    int wide;
    Py_ssize_t first;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*pny*w*w*", &codes, &scores, &order, &rows, &offsets,
                          &wide, &first, &data, &out_at, &out_from))
        return NULL;
    PyObject *result = NULL;
    Doc *docs = NULL, *spare = NULL;
    Py_ssize_t n = scores.len / 8;
    Py_ssize_t n_docs = (offsets.len / (wide ? 8 : 4)) - first - 1;
    if (first < 0 || n_docs < 0 || check_size(&codes, 8, n, "codes") < 0 ||
        check_size(&rows, 8, n, "rows") < 0 || (order.len && check_size(&order, 8, n, "order") < 0) ||
        check_size(&out_at, 8, n, "out_at") < 0 || check_size(&out_from, 8, n, "out_from") < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad doc offsets");
        goto done;
    }
    const int64_t *code = (const int64_t *)codes.buf;
    const double *score = (const double *)scores.buf;
    const int64_t *at_position = order.len ? (const int64_t *)order.buf : NULL;
    const int64_t *doc_row = (const int64_t *)rows.buf;
    const int32_t *narrow = (const int32_t *)offsets.buf + first;
    const int64_t *broad = (const int64_t *)offsets.buf + first;
    const unsigned char *bytes = (const unsigned char *)data.buf;
    int64_t *move_at = (int64_t *)out_at.buf;
    int64_t *move_from = (int64_t *)out_from.buf;
    Py_ssize_t moves = 0, capacity = 0;
    int bad = 0, no_memory = 0;
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t p = 0;
    while (p + 1 < n && !bad && !no_memory) {
        int64_t row = at_position ? at_position[p] : p;
        Py_ssize_t end = p + 1;
        while (end < n) {
            int64_t next = at_position ? at_position[end] : end;
            if (next < 0 || next >= n || row < 0 || row >= n) {
                bad = 1;
                break;
            }
            if (code[next] != code[row] || score[next] != score[row]) break;
            end++;
        }
        if (bad) break;
        Py_ssize_t size = end - p;
        if (size >= 2) {
            if (size > capacity) {
                free(docs);
                free(spare);
                capacity = size * 2;
                docs = (Doc *)malloc((size_t)capacity * sizeof(Doc));
                spare = (Doc *)malloc((size_t)capacity * sizeof(Doc));
                if (docs == NULL || spare == NULL) {
                    no_memory = 1;
                    break;
                }
            }
            for (Py_ssize_t k = 0; k < size; k++) {
                int64_t r = at_position ? at_position[p + k] : p + k;
                int64_t d = doc_row[r];
                if (d < 0 || d >= n_docs) {
                    bad = 1;
                    break;
                }
                int64_t start = wide ? broad[d] : narrow[d];
                int64_t stop = wide ? broad[d + 1] : narrow[d + 1];
                if (start < 0 || stop < start || stop > data.len) {
                    bad = 1;
                    break;
                }
                docs[k].bytes = bytes + start;
                docs[k].length = stop - start;
                docs[k].position = p + k;
            }
            if (bad) break;
            sort_docs(docs, spare, size);
            for (Py_ssize_t k = 0; k < size; k++) {
                if (docs[k].position != p + k) {
                    move_at[moves] = p + k;
                    move_from[moves] = docs[k].position;
                    moves++;
                }
            }
        }
        p = end;
    }
    Py_END_ALLOW_THREADS
    free(docs);
    free(spare);
    if (no_memory) {
        PyErr_NoMemory();
        goto done;
    }
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "rows or doc offsets out of range");
        goto done;
    }
    result = PyLong_FromSsize_t(moves);
done:
    PyBuffer_Release(&codes);
    PyBuffer_Release(&scores);
    PyBuffer_Release(&order);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    PyBuffer_Release(&out_at);
    PyBuffer_Release(&out_from);
    return result;
}

/* Exact powers of ten: every one up to 1e22 is a double. */
static const double POWERS[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The double nearest the decimal number in text[0:length] (correctly rounded, as Arrow's
 * reader and Python's float() give it), written [-]digits[.digits][(e|E)[+|-]digits]; 0 when
 * it is not written so, or is out of range (the caller then leaves the text to Arrow). Most
 * scores take the exact path: at most 19 digits whose value is below 2^53, scaled by a power
 * of ten that is itself exact, one correctly rounded operation. The others go to strtod. */
static int
parse_score(const unsigned char *text, Py_ssize_t length, double *out)
{
    Py_ssize_t at = 0;
    int negative = 0;
    if (at < length && text[at] == '-') {
        negative = 1;
        at++;
    }
    uint64_t mantissa = 0;
    int digits = 0, kept = 0, dropped = 0;
    int64_t scale = 0;
    Py_ssize_t start = at;
    while (at < length && text[at] >= '0' && text[at] <= '9') {
        if (mantissa == 0 && text[at] == '0') {
            /* leading zeros carry nothing */
        }
        else if (kept < 19) {
            mantissa = mantissa * 10 + (uint64_t)(text[at] - '0');
            kept++;
        }
        else {
            dropped = 1;
            scale++;
        }
        digits++;
        at++;
    }
    if (at == start) return 0;
    if (at < length && text[at] == '.') {
        at++;
        Py_ssize_t fraction = at;
        while (at < length && text[at] >= '0' && text[at] <= '9') {
            if (mantissa == 0 && text[at] == '0') {
                scale--;
            }
            else if (kept < 19) {
                mantissa = mantissa * 10 + (uint64_t)(text[at] - '0');
                kept++;
                scale--;
            }
            else {
                dropped = 1;
            }
            at++;
        }
        if (at == fraction) return 0;
    }
    if (at < length && (text[at] == 'e' || text[at] == 'E')) {
        at++;
        int minus = 0;
        if (at < length && (text[at] == '+' || text[at] == '-')) {
            minus = text[at] == '-';
            at++;
        }
        Py_ssize_t exponent_start = at;
        int64_t exponent = 0;
        while (at < length && text[at] >= '0' && text[at] <= '9') {
            if (exponent < 100000) exponent = exponent * 10 + (text[at] - '0');
            at++;
        }
        if (at == exponent_start) return 0;
        scale += minus ? -exponent : exponent;
    }
    if (at != length) return 0;
    double value;
    if (mantissa == 0) {
        value = 0.0;
    }
    else if (!dropped && mantissa <= (UINT64_C(1) << 53) && scale >= -22 && scale <= 22) {
        value = (double)mantissa;
        value = scale < 0 ? value / POWERS[-scale] : value * POWERS[scale];
    }
    else {
        char copy[80];
        if (length >= (Py_ssize_t)sizeof(copy)) return 0;
        const struct lconv *numeric = localeconv();
        if (numeric->decimal_point[0] != '.' || numeric->decimal_point[1] != 0) return 0;
        memcpy(copy, text, (size_t)length);
        copy[length] = 0;
        char *end = NULL;
        errno = 0;
        value = strtod(copy, &end);
        /* ERANGE with a finite, non-zero value is a subnormal, correctly rounded still; a
         * value beyond the range, or one rounded to zero, is left to Arrow. */
        if (end != copy + length || !isfinite(value) || (errno == ERANGE && value == 0.0))
            return 0;
        *out = value;
        return 1;
    }
    *out = negative ? -value : value;
    return 1;
}

/* end_of_field: where the field starting at text[at] ends: the first byte that cannot be in
 * a field of the common layout (a blank or control byte, DEL or above, '#'), or length.
 * Eight bytes at a time: each test below flags the first byte that meets it exactly (a false
 * flag can only sit above a true one), so the lowest flag of all is the first stop byte. */
#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

static inline int
lowest_byte(uint64_t flags)
{
#if defined(_MSC_VER)
    unsigned long index;
    _BitScanForward64(&index, flags);
    return (int)(index >> 3);
#else
    return __builtin_ctzll(flags) >> 3;
#endif
}

static inline Py_ssize_t
end_of_field(const unsigned char *text, Py_ssize_t at, Py_ssize_t length)
{
#if !PY_BIG_ENDIAN
    while (at + 8 <= length) {
        uint64_t word;
        memcpy(&word, text + at, 8);
        uint64_t blank = (word - ONES * 0x21) & ~word & HIGHS; /* a byte below 0x21 */
        uint64_t high = word & HIGHS;                            /* 0x80 and above */
        uint64_t del = word ^ (ONES * 0x7f);
        del = (del - ONES) & ~del & HIGHS;                       /* 0x7f */
        uint64_t hash = word ^ (ONES * '#');
        hash = (hash - ONES) & ~hash & HIGHS;                    /* '#' */
        uint64_t flags = blank | high | del | hash;
        if (flags) return at + lowest_byte(flags);
        at += 8;
    }
#endif
    while (at < length) {
        unsigned char c = text[at];
        if (c <= ' ' || c >= 0x7f || c == '#') break;
        at++;
    }
    return at;
}

/* Block: memory malloc'd here, handed to Python without a copy; its buffer (read-only) is
 * what Arrow reads a column from, and the memory is freed with the last reference. */
typedef struct {
    PyObject_HEAD
    void *data;
    Py_ssize_t size;
} Block;

static int
block_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    Block *block = (Block *)self;
    return PyBuffer_FillInfo(view, self, block->data, block->size, 1, flags);
}

static void
block_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    free(((Block *)self)->data);
    type->tp_free(self);
    Py_DECREF(type); /* a heap type: each instance holds a reference to it */
}

static PyType_Slot block_slots[] = {
    {Py_tp_dealloc, (void *)block_dealloc},
    {Py_bf_getbuffer, (void *)block_getbuffer},
    {Py_tp_doc, (void *)"Memory the scanner filled, read through the buffer protocol."},
    {0, NULL},
};

static PyType_Spec block_spec = {
    "rankmeter.data._native.Block", sizeof(Block), 0, Py_TPFLAGS_DEFAULT, block_slots,
};

static PyTypeObject *BlockType = NULL; /* made when the module is imported */

/* A buffer that grows as it is filled (doubling), so that what a piece needs is allocated,
 * not what the worst piece could need. */
typedef struct {
    unsigned char *bytes;
    size_t used, size;
} Growing;

/* Room for count more bytes, doubling the buffer as often as that takes; -1 without memory. */
static int
make_room(Growing *buffer, size_t count)
{
    if (buffer->used + count <= buffer->size) return 0;
    size_t size = buffer->size ? buffer->size : 4096;
    while (size < buffer->used + count) size *= 2;
    unsigned char *grown = (unsigned char *)realloc(buffer->bytes, size);
    if (grown == NULL) return -1;
    buffer->bytes = grown;
    buffer->size = size;
    return 0;
}

static int
put(Growing *buffer, const void *source, size_t count)
{
    if (make_room(buffer, count) < 0) return -1;
    memcpy(buffer->bytes + buffer->used, source, count);
    buffer->used += count;
    return 0;
}

/* put() for a short field: a field of up to 16 bytes is copied as two 8-byte words whatever
 * its length (the bytes past it are overwritten by the next field): no call to memcpy per
 * field. */
static inline int
put_field(Growing *buffer, const unsigned char *source, size_t count, const unsigned char *end)
{
    if (count > 16 || source + 16 > end) return put(buffer, source, count);
    if (make_room(buffer, 16) < 0) return -1;
    memcpy(buffer->bytes + buffer->used, source, 8);
    memcpy(buffer->bytes + buffer->used + 8, source + 8, 8);
    buffer->used += count;
    return 0;
}

/* parse_run(data) -> (rows, q_offsets, q_bytes, d_offsets, d_bytes, scores) or None: a piece
 * of a TREC run (whole lines) read as Arrow's reader reads it under the streaming reader's
 * options, when every line is six fields of printable ASCII split by one space ("qid Q0
 * docid rank score tag"), empty lines skipped, and every score a decimal number. Anything
 * else (a tab, a comment, CR, a doubled or edge blank, more or fewer fields, non-ASCII text,
 * another way of writing a number) gives None, and the caller reads the piece as before.
 * The query and doc ids come back as Arrow string offsets (int32) and bytes, the scores as
 * doubles, each a Block of exactly its size (no copy). */
static PyObject *
parse_run(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "y*", &data)) return NULL;
    PyObject *result = NULL;
    Growing q_offsets = {NULL, 0, 0}, q_bytes = {NULL, 0, 0}, d_offsets = {NULL, 0, 0},
            d_bytes = {NULL, 0, 0}, scores = {NULL, 0, 0};
    if (data.len > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "piece over 2 GB");
        goto done;
    }
    const unsigned char *text = (const unsigned char *)data.buf;
    Py_ssize_t length = data.len;
    Py_ssize_t rows = 0;
    int refused = 0, no_memory = 0;
    int32_t zero = 0;
    Py_BEGIN_ALLOW_THREADS
    {
        /* Room for what a piece of typical lines holds (lines of 24 bytes or more, ids a
         * quarter of the text each), so that most pieces never grow; the pages are given
         * memory only as they are written. */
        size_t rows_guess = (size_t)length / 24 + 16;
        Growing *reserve[5] = {&q_offsets, &d_offsets, &scores, &q_bytes, &d_bytes};
        size_t sizes[5] = {rows_guess * 4, rows_guess * 4, rows_guess * 8,
                           (size_t)length / 4 + 64, (size_t)length / 4 + 64};
        for (int k = 0; k < 5 && !no_memory; k++) {
            reserve[k]->bytes = (unsigned char *)malloc(sizes[k]);
            reserve[k]->size = sizes[k];
            no_memory = reserve[k]->bytes == NULL;
        }
    }
    no_memory = no_memory || put(&q_offsets, &zero, 4) < 0 || put(&d_offsets, &zero, 4) < 0;
    Py_ssize_t at = 0;
    while (at < length && !no_memory) {
        if (text[at] == '\n') { /* an empty line: Arrow skips it */
            at++;
            continue;
        }
        Py_ssize_t field_start[6], field_end[6];
        for (int field = 0; field < 6; field++) {
            Py_ssize_t start = at;
            at = end_of_field(text, at, length);
            if (at == start) {
                refused = 1;
                break;
            }
            field_start[field] = start;
            field_end[field] = at;
            if (field < 5) {
                if (at < length && text[at] == ' ') at++;
                else {
                    refused = 1;
                    break;
                }
            }
            else if (at < length) {
                if (text[at] == '\n') at++;
                else {
                    refused = 1;
                    break;
                }
            }
        }
        if (refused) break;
        double score;
        if (!parse_score(text + field_start[4], field_end[4] - field_start[4], &score)) {
            refused = 1;
            break;
        }
        const unsigned char *stop = text + length;
        if (put_field(&q_bytes, text + field_start[0], (size_t)(field_end[0] - field_start[0]),
                      stop) < 0 ||
            put_field(&d_bytes, text + field_start[2], (size_t)(field_end[2] - field_start[2]),
                      stop) < 0 ||
            put(&scores, &score, sizeof(double)) < 0) {
            no_memory = 1;
            break;
        }
        int32_t q_end = (int32_t)q_bytes.used, d_end = (int32_t)d_bytes.used;
        if (put(&q_offsets, &q_end, 4) < 0 || put(&d_offsets, &d_end, 4) < 0) {
            no_memory = 1;
            break;
        }
        rows++;
    }
    Py_END_ALLOW_THREADS
    if (no_memory) {
        PyErr_NoMemory();
        goto done;
    }
    if (refused) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    {
        /* Each column's memory, cut to what was written (the pages reserved and never
         * touched go back), becomes a Block: no copy. */
        Growing *filled[5] = {&q_offsets, &q_bytes, &d_offsets, &d_bytes, &scores};
        PyObject *blocks[5] = {NULL, NULL, NULL, NULL, NULL};
        int failed = 0;
        for (int k = 0; k < 5 && !failed; k++) {
            Block *block = PyObject_New(Block, BlockType);
            if (block == NULL) {
                failed = 1;
                break;
            }
            size_t used = filled[k]->used;
            void *data = filled[k]->bytes;
            void *cut = data == NULL ? NULL : realloc(data, used ? used : 1);
            block->data = cut != NULL ? cut : data;
            block->size = (Py_ssize_t)used;
            filled[k]->bytes = NULL; /* the Block owns it now */
            blocks[k] = (PyObject *)block;
        }
        PyObject *count = failed ? NULL : PyLong_FromSsize_t(rows);
        result = count == NULL ? NULL : PyTuple_New(6);
        if (result == NULL) {
            Py_XDECREF(count);
            for (int k = 0; k < 5; k++) Py_XDECREF(blocks[k]);
        }
        else {
            PyTuple_SET_ITEM(result, 0, count); /* (the tuple takes each reference) */
            for (int k = 0; k < 5; k++) PyTuple_SET_ITEM(result, k + 1, blocks[k]);
        }
    }
done:
    free(q_offsets.bytes);
    free(q_bytes.bytes);
    free(d_offsets.bytes);
    free(d_bytes.bytes);
    free(scores.bytes);
    PyBuffer_Release(&data);
    return result;
}

/* dictionary_codes(offsets, wide, first, n, data, hashes, codes, firsts) -> distinct: the
 * codes of n strings numbered in order of first appearance, as Arrow's dictionary_encode
 * numbers them; firsts[k] is the row where the k-th distinct string first appears. hashes
 * are the strings' string_hashes; equal hashes are confirmed on the bytes. */
static PyObject *
dictionary_codes(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer offsets, data, hashes, codes, firsts;
    int wide;
    Py_ssize_t first, n;
    if (!PyArg_ParseTuple(args, "y*pnny*y*w*w*", &offsets, &wide, &first, &n, &data, &hashes,
                          &codes, &firsts))
        return NULL;
    PyObject *result = NULL;
    int64_t *slots = NULL;
    Py_ssize_t item = wide ? 8 : 4;
    if (check_size(&offsets, item, counted(first, n), "offsets") < 0 ||
        check_size(&hashes, 8, n, "hashes") < 0 || check_size(&codes, 8, n, "codes") < 0 ||
        check_size(&firsts, 8, n, "firsts") < 0)
        goto done;
    int bits = 4;
    while (((Py_ssize_t)1 << bits) < 2 * n) bits++;
    size_t size = (size_t)1 << bits, mask = size - 1;
    slots = (int64_t *)calloc(size, sizeof(int64_t)); /* 0: empty, else code + 1 */
    if (slots == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const int32_t *narrow = (const int32_t *)offsets.buf + first;
    const int64_t *broad = (const int64_t *)offsets.buf + first;
    const unsigned char *bytes = (const unsigned char *)data.buf;
    const uint64_t *hash = (const uint64_t *)hashes.buf;
    int64_t *code = (int64_t *)codes.buf;
    int64_t *first_row = (int64_t *)firsts.buf;
    Py_ssize_t distinct = 0;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !bad; i++) {
        int64_t start = wide ? broad[i] : narrow[i];
        int64_t stop = wide ? broad[i + 1] : narrow[i + 1];
        if (start < 0 || stop < start || stop > data.len) {
            bad = 1;
            break;
        }
        size_t at = (size_t)(hash[i] >> (64 - bits));
        for (;;) {
            int64_t taken = slots[at];
            if (taken == 0) {
                slots[at] = distinct + 1;
                first_row[distinct] = i;
                code[i] = distinct++;
                break;
            }
            int64_t row = first_row[taken - 1];
            if (hash[row] == hash[i]) {
                int64_t other = wide ? broad[row] : narrow[row];
                int64_t other_stop = wide ? broad[row + 1] : narrow[row + 1];
                if (other_stop - other == stop - start &&
                    memcmp(bytes + other, bytes + start, (size_t)(stop - start)) == 0) {
                    code[i] = taken - 1;
                    break;
                }
            }
            at = (at + 1) & mask;
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "string offsets outside the data buffer");
        goto done;
    }
    result = PyLong_FromSsize_t(distinct);
done:
    free(slots);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&data);
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&codes);
    PyBuffer_Release(&firsts);
    return result;
}

/* The pairs (key, grade) of row `row` of a pair table whose offsets are pair_offsets
 * (n_rows + 1 of them, into n_pairs pairs): from *start to *stop; 0, or -1 where the row or
 * its offsets lie outside the table. */
static inline int
pair_range(const int64_t *pair_offsets, Py_ssize_t n_rows, Py_ssize_t n_pairs, int64_t row,
           int64_t *start, int64_t *stop)
{
    if (row < 0 || row >= n_rows) return -1;
    *start = pair_offsets[row];
    *stop = pair_offsets[row + 1];
    return (*start < 0 || *stop < *start || *stop > n_pairs) ? -1 : 0;
}

/* Whether offsets (n + 1 of them) rise from 0 or more to at most items. */
static int
check_offsets(const int64_t *offsets, Py_ssize_t n, Py_ssize_t items)
{
    if (offsets[0] < 0 || offsets[n] > items) return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (offsets[i + 1] < offsets[i]) return -1;
    return 0;
}

/* key_repeats(offsets, rows, ranks, depth, pair_offsets, pair_keys, pair_grades, threshold,
 * n_keys, powers, score, new, out_item, out_key, out_seen) -> pairs: the running count of keys
 * within segments (the run's side of the diversity metrics).
 *
 * Segment i holds the items offsets[i]:offsets[i+1], in order; item j reads, where
 * rows[j] >= 0 and ranks[j] < depth, the pairs of row rows[j] of the pair table (pair_offsets, pair_keys,
 * pair_grades) whose grade is >= threshold and >= 0, in their order. Each such pair's seen is
 * the number of such pairs before it in its segment with the same key; score[j] is the sum of
 * powers[seen] over item j's pairs (added in their order from 0.0) and new[j] the number of
 * them with seen 0 (every item's score and new are written). The pairs (item, key, seen) go
 * into out_item, out_key, out_seen while they fit; the number of pairs is returned (call again
 * with that much room where it is more). */
static PyObject *
key_repeats(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer offsets, rows, ranks, pair_offsets, pair_keys, pair_grades, powers, score, new_,
        out_item, out_key, out_seen;
    long long depth;
    double threshold;
    Py_ssize_t n_keys;
    if (!PyArg_ParseTuple(args, "y*y*y*Ly*y*y*dny*w*w*w*w*w*", &offsets, &rows, &ranks, &depth,
                          &pair_offsets, &pair_keys, &pair_grades, &threshold, &n_keys, &powers,
                          &score, &new_, &out_item, &out_key, &out_seen))
        return NULL;
    PyObject *result = NULL;
    int64_t *count = NULL, *stamp = NULL;
    Py_ssize_t n_segments = offsets.len / 8 - 1, n_items = rows.len / 8;
    Py_ssize_t n_rows = pair_offsets.len / 8 - 1, n_pairs = pair_keys.len / 8;
    Py_ssize_t n_powers = powers.len / 8, room = out_item.len / 8;
    if (n_segments < 0 || n_rows < 0 || n_keys < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets: at least one needed");
        goto done;
    }
    if (check_size(&ranks, 8, n_items, "ranks") < 0 ||
        check_size(&pair_grades, 8, n_pairs, "pair_grades") < 0 ||
        check_size(&score, 8, n_items, "score") < 0 || check_size(&new_, 8, n_items, "new") < 0 ||
        check_size(&out_key, 8, room, "out_key") < 0 ||
        check_size(&out_seen, 8, room, "out_seen") < 0)
        goto done;
    const int64_t *segment = (const int64_t *)offsets.buf;
    if (check_offsets(segment, n_segments, n_items) < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets: not rising within the items");
        goto done;
    }
    count = (int64_t *)calloc((size_t)n_keys + 1, sizeof(int64_t));
    stamp = (int64_t *)calloc((size_t)n_keys + 1, sizeof(int64_t));
    if (count == NULL || stamp == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const int64_t *row = (const int64_t *)rows.buf, *pair_at = (const int64_t *)pair_offsets.buf;
    const int64_t *key = (const int64_t *)pair_keys.buf, *rank = (const int64_t *)ranks.buf;
    const double *grade = (const double *)pair_grades.buf, *power = (const double *)powers.buf;
    double *gain = (double *)score.buf, *first = (double *)new_.buf;
    int64_t *item_out = (int64_t *)out_item.buf, *key_out = (int64_t *)out_key.buf,
            *seen_out = (int64_t *)out_seen.buf;
    Py_ssize_t written = 0;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t j = 0; j < n_items; j++) gain[j] = first[j] = 0.0;
    for (Py_ssize_t i = 0; i < n_segments && !bad; i++) {
        for (int64_t j = segment[i]; j < segment[i + 1] && !bad; j++) {
            if (row[j] < 0 || rank[j] >= depth) continue;
            int64_t start, stop;
            if (pair_range(pair_at, n_rows, n_pairs, row[j], &start, &stop) < 0) {
                bad = 1;
                break;
            }
            double sum = 0.0, fresh = 0.0;
            for (int64_t t = start; t < stop; t++) {
                if (!(grade[t] >= threshold && grade[t] >= 0)) continue;
                int64_t k = key[t];
                if (k < 0 || k >= n_keys) {
                    bad = 2;
                    break;
                }
                if (stamp[k] != i + 1) {
                    stamp[k] = i + 1;
                    count[k] = 0;
                }
                int64_t seen = count[k]++;
                if (seen >= n_powers) {
                    bad = 3;
                    break;
                }
                sum += power[seen];
                fresh += seen == 0;
                if (written < room) {
                    item_out[written] = j;
                    key_out[written] = k;
                    seen_out[written] = seen;
                }
                written++;
            }
            gain[j] = sum;
            first[j] = fresh;
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError,
                        bad == 1   ? "rows: a row or its pairs outside the pair table"
                        : bad == 2 ? "pair_keys: a key outside 0..n_keys-1"
                                   : "powers: fewer than a segment's repeats of a key");
        goto done;
    }
    result = PyLong_FromSsize_t(written);
done:
    free(count);
    free(stamp);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&ranks);
    PyBuffer_Release(&pair_offsets);
    PyBuffer_Release(&pair_keys);
    PyBuffer_Release(&pair_grades);
    PyBuffer_Release(&powers);
    PyBuffer_Release(&score);
    PyBuffer_Release(&new_);
    PyBuffer_Release(&out_item);
    PyBuffer_Release(&out_key);
    PyBuffer_Release(&out_seen);
    return result;
}

/* greedy_ideal(offsets, rows, tie_keys, pair_offsets, pair_keys, pair_grades, threshold,
 * n_keys, factor, width, gains, picked, distinct) -> most: a greedy ordering of each
 * segment's items by their keys (the ideal side of alpha-nDCG and nERR-IA, as ndeval finds it).
 *
 * Segment i holds the items offsets[i]:offsets[i+1]; item j reads the pairs of row rows[j]
 * (skipped where < 0; tie_keys are read only where width > 0) of the pair table whose grade is >= threshold and >= 0 (as
 * key_repeats). The candidates are the items with such a pair; distinct[i] is the number of
 * different keys among them, and the largest number of candidates of a segment is returned.
 * Then, each key weighing 1 and each candidate scoring its number of pairs, ranks
 * 0..width-1 are filled: the candidate with the largest score (equal scores: the largest
 * tie_keys; a segment's tie keys are distinct) is placed where its score is > 0:
 * gains[i * width + r] is the sum of its keys' weights (in its pairs' order, from 0.0) and
 * picked[i * width + r] the item; each of its keys' weight is multiplied by factor, and the
 * difference taken from the score of every candidate left with the key (the keys in the
 * placed item's order). Ranks where nothing is placed hold gain 0 and item -1. */
static PyObject *
greedy_ideal(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer offsets, rows, tie_keys, pair_offsets, pair_keys, pair_grades, gains, picked,
        distinct;
    double threshold, factor;
    Py_ssize_t n_keys, width;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*dndnw*w*w*", &offsets, &rows, &tie_keys,
                          &pair_offsets, &pair_keys, &pair_grades, &threshold, &n_keys, &factor,
                          &width, &gains, &picked, &distinct))
        return NULL;
    PyObject *result = NULL;
    /* per key of the table: the segment that saw it last (+ 1) and its number there */
    int64_t *stamp = NULL, *local = NULL;
    /* per candidate of a segment (room for `items`): its item and where its keys start in
     * cand_keys; per slot (the candidates by tie key, descending), the candidate there, its
     * tie key and its score (-inf once placed) */
    int64_t *cand = NULL, *cand_start = NULL, *alive = NULL, *alive_tie = NULL;
    uint64_t *alive_mask = NULL;
    double *alive_score = NULL;
    /* per pair of a segment (room for `pairs`): its key's number; per key number, where its
     * candidates start in key_cands, and its weight */
    int64_t *cand_keys = NULL, *key_start = NULL, *key_cands = NULL;
    double *weight = NULL;
    Py_ssize_t n_segments = offsets.len / 8 - 1, n_items = rows.len / 8;
    Py_ssize_t n_rows = pair_offsets.len / 8 - 1, n_pairs = pair_keys.len / 8;
    if (n_segments < 0 || n_rows < 0 || n_keys < 0 || width < 0 ||
        width > PY_SSIZE_T_MAX / 8) {
        PyErr_SetString(PyExc_ValueError, "offsets: at least one needed");
        goto done;
    }
    if ((width > 0 && check_size(&tie_keys, 8, n_items, "tie_keys") < 0) ||
        check_size(&pair_grades, 8, n_pairs, "pair_grades") < 0 ||
        check_size(&distinct, 8, n_segments, "distinct") < 0 ||
        (width > 0 && (check_size(&gains, 8 * width, n_segments, "gains") < 0 ||
                       check_size(&picked, 8 * width, n_segments, "picked") < 0)))
        goto done;
    const int64_t *segment = (const int64_t *)offsets.buf;
    if (check_offsets(segment, n_segments, n_items) < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets: not rising within the items");
        goto done;
    }
    Py_ssize_t items = 0, pairs = 64;
    for (Py_ssize_t i = 0; i < n_segments; i++)
        if (segment[i + 1] - segment[i] > items) items = segment[i + 1] - segment[i];
    stamp = (int64_t *)calloc((size_t)n_keys + 1, sizeof(int64_t));
    local = (int64_t *)calloc((size_t)n_keys + 1, sizeof(int64_t));
    cand = (int64_t *)malloc(((size_t)items + 1) * sizeof(int64_t));
    cand_start = (int64_t *)malloc(((size_t)items + 2) * sizeof(int64_t));
    alive = (int64_t *)malloc(((size_t)items + 1) * sizeof(int64_t));
    alive_tie = (int64_t *)malloc(((size_t)items + 1) * sizeof(int64_t));
    alive_score = (double *)malloc(((size_t)items + 1) * sizeof(double));
    alive_mask = (uint64_t *)malloc(((size_t)items + 1) * sizeof(uint64_t));
    cand_keys = (int64_t *)malloc((size_t)pairs * sizeof(int64_t));
    key_start = (int64_t *)malloc(((size_t)pairs + 1) * sizeof(int64_t));
    key_cands = (int64_t *)malloc((size_t)pairs * sizeof(int64_t));
    weight = (double *)malloc((size_t)pairs * sizeof(double));
    if (!stamp || !local || !cand || !cand_start || !alive || !alive_tie ||
        !alive_score || !alive_mask || !cand_keys || !key_start || !key_cands || !weight) {
        PyErr_NoMemory();
        goto done;
    }
    const int64_t *row = (const int64_t *)rows.buf, *pair_at = (const int64_t *)pair_offsets.buf;
    const int64_t *key = (const int64_t *)pair_keys.buf, *tie = (const int64_t *)tie_keys.buf;
    const double *grade = (const double *)pair_grades.buf;
    double *gain = (double *)gains.buf;
    int64_t *place = (int64_t *)picked.buf, *keys_of = (int64_t *)distinct.buf;
    Py_ssize_t most = 0;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n_segments && !bad; i++) {
        Py_ssize_t n_cand = 0, n_local = 0, used = 0;
        cand_start[0] = 0;
        for (int64_t j = segment[i]; j < segment[i + 1] && !bad; j++) {
            int64_t start, stop;
            if (row[j] < 0) continue;
            if (pair_range(pair_at, n_rows, n_pairs, row[j], &start, &stop) < 0) {
                bad = 1;
                break;
            }
            if (used + (stop - start) > pairs) { /* room for this segment's pairs */
                Py_ssize_t more = 2 * (used + (Py_ssize_t)(stop - start));
                int64_t *keys_more = (int64_t *)realloc(cand_keys, (size_t)more * 8);
                if (keys_more != NULL) cand_keys = keys_more;
                int64_t *start_more = (int64_t *)realloc(key_start, ((size_t)more + 1) * 8);
                if (start_more != NULL) key_start = start_more;
                int64_t *cands_more = (int64_t *)realloc(key_cands, (size_t)more * 8);
                if (cands_more != NULL) key_cands = cands_more;
                double *weight_more = (double *)realloc(weight, (size_t)more * 8);
                if (weight_more != NULL) weight = weight_more;
                if (!keys_more || !start_more || !cands_more || !weight_more) {
                    bad = 3;
                    break;
                }
                pairs = more;
            }
            Py_ssize_t before = used;
            for (int64_t t = start; t < stop; t++) {
                /* (without a branch on the grade: whether a pair counts is unpredictable) */
                int counts = grade[t] >= threshold && grade[t] >= 0;
                int64_t k = key[t];
                if (k < 0 || k >= n_keys) {
                    bad = 2;
                    break;
                }
                if (counts && stamp[k] != i + 1) {
                    stamp[k] = i + 1;
                    local[k] = n_local++;
                }
                cand_keys[used] = local[k];
                used += counts;
            }
            cand[n_cand] = j;
            cand_start[n_cand + 1] = used;
            n_cand += used > before;
        }
        if (bad) break;
        keys_of[i] = n_local;
        if (n_cand > most) most = n_cand;
        double *gain_i = gain + i * width;
        int64_t *place_i = place + i * width;
        for (Py_ssize_t r = 0; r < width; r++) {
            gain_i[r] = 0.0;
            place_i[r] = -1;
        }
        if (width == 0 || n_cand == 0) continue;
        /* With at most 64 keys, each slot's keys are a bit mask, and a key's drop is taken
         * from every slot at once (0.0 where a slot lacks it: x - 0.0 is x); with more, from the
         * candidates listed under the key. Either way each score takes the same
         * subtractions in the same order. */
        int masks = n_local <= 64;
        for (Py_ssize_t k = 0; k < n_local; k++) weight[k] = 1.0;
        if (!masks) { /* the candidates of each key (as slots, below) */
            for (Py_ssize_t k = 0; k <= n_local; k++) key_start[k] = 0;
            for (Py_ssize_t p = 0; p < used; p++) key_start[cand_keys[p] + 1]++;
            for (Py_ssize_t k = 0; k < n_local; k++) key_start[k + 1] += key_start[k];
        }
        /* the candidates in slots by tie key, descending (an insertion sort: a segment's
         * candidates are few), so the first slot of the largest score is the one placed */
        for (Py_ssize_t c = 0; c < n_cand; c++) {
            int64_t t = tie[cand[c]];
            Py_ssize_t slot = c;
            for (; slot > 0 && alive_tie[slot - 1] < t; slot--) {
                alive_tie[slot] = alive_tie[slot - 1];
                alive[slot] = alive[slot - 1];
            }
            alive_tie[slot] = t;
            alive[slot] = c;
        }
        for (Py_ssize_t slot = 0; slot < n_cand; slot++) {
            Py_ssize_t c = alive[slot];
            uint64_t mask = 0;
            alive_score[slot] = (double)(cand_start[c + 1] - cand_start[c]);
            for (int64_t p = cand_start[c]; p < cand_start[c + 1]; p++) {
                if (masks) mask |= (uint64_t)1 << cand_keys[p];
                else key_cands[key_start[cand_keys[p]]++] = slot;
            }
            alive_mask[slot] = mask;
        }
        if (!masks) {
            for (Py_ssize_t k = n_local; k > 0; k--) key_start[k] = key_start[k - 1];
            key_start[0] = 0;
        }
        for (Py_ssize_t r = 0; r < width; r++) {
            /* the largest score (four running maxima: no chain of dependent compares), then
             * the first slot that has it */
            double top[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
            Py_ssize_t slot = 0;
            for (; slot + 4 <= n_cand; slot += 4)
                for (int lane = 0; lane < 4; lane++)
                    top[lane] = alive_score[slot + lane] > top[lane] ? alive_score[slot + lane]
                                                                     : top[lane];
            for (; slot < n_cand; slot++)
                top[0] = alive_score[slot] > top[0] ? alive_score[slot] : top[0];
            double best = top[0] > top[1] ? top[0] : top[1];
            double other = top[2] > top[3] ? top[2] : top[3];
            best = other > best ? other : best;
            if (!(best > 0)) break;
            Py_ssize_t first = 0;
            while (alive_score[first] != best) first++;
            Py_ssize_t win = alive[first];
            double sum = 0.0;
            for (int64_t p = cand_start[win]; p < cand_start[win + 1]; p++)
                sum += weight[cand_keys[p]];
            gain_i[r] = sum;
            place_i[r] = cand[win];
            for (int64_t p = cand_start[win]; p < cand_start[win + 1]; p++) {
                int64_t k = cand_keys[p];
                double old = weight[k];
                weight[k] = old * factor;
                double drop = old - weight[k];
                if (masks) { /* drop's bits where the slot has the key, else +0.0's */
                    uint64_t drop_bits, taken_bits;
                    memcpy(&drop_bits, &drop, 8);
                    for (Py_ssize_t q = 0; q < n_cand; q++) {
                        taken_bits = drop_bits & ((uint64_t)0 - ((alive_mask[q] >> k) & 1));
                        double taken;
                        memcpy(&taken, &taken_bits, 8);
                        alive_score[q] -= taken;
                    }
                }
                else
                    for (int64_t q = key_start[k]; q < key_start[k + 1]; q++)
                        alive_score[key_cands[q]] -= drop;
            }
            alive_score[first] = -INFINITY; /* placed */
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        if (bad == 3) PyErr_NoMemory();
        else
            PyErr_SetString(PyExc_ValueError,
                            bad == 1 ? "rows: a row or its pairs outside the pair table"
                                     : "pair_keys: a key outside 0..n_keys-1");
        goto done;
    }
    result = PyLong_FromSsize_t(most);
done:
    free(stamp);
    free(local);
    free(cand);
    free(cand_start);
    free(alive);
    free(alive_tie);
    free(alive_score);
    free(alive_mask);
    free(cand_keys);
    free(key_start);
    free(key_cands);
    free(weight);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&tie_keys);
    PyBuffer_Release(&pair_offsets);
    PyBuffer_Release(&pair_keys);
    PyBuffer_Release(&pair_grades);
    PyBuffer_Release(&gains);
    PyBuffer_Release(&picked);
    PyBuffer_Release(&distinct);
    return result;
}

static PyMethodDef methods[] = {
    {"hash_strings", hash_strings, METH_VARARGS,
     "hash_strings(offsets, wide, first, n, data, out): string_hashes into out."},
    {"find_keys", find_keys, METH_VARARGS,
     "find_keys(table, shift, ordered, order, keys, probes, segments, adds, skip, spans, "
     "out_at, out_index) -> found: KeyTable.find."},
    {"tie_moves", tie_moves, METH_VARARGS,
     "tie_moves(codes, scores, order, rows, doc_offsets, wide, first, data, out_at, out_from) "
     "-> moves: equal scores put in doc id order, descending."},
    {"parse_run", parse_run, METH_VARARGS,
     "parse_run(data) -> (rows, q_offsets, q_bytes, d_offsets, d_bytes, scores) or None: a "
     "piece of a TREC run in the common layout."},
    {"dictionary_codes", dictionary_codes, METH_VARARGS,
     "dictionary_codes(offsets, wide, first, n, data, hashes, codes, firsts) -> distinct: "
     "codes in order of first appearance."},
    {"segments_repeat", segments_repeat, METH_VARARGS,
     "segments_repeat(offsets, keys) -> bool: whether a segment holds a key twice."},
    {"key_repeats", key_repeats, METH_VARARGS,
     "key_repeats(offsets, rows, ranks, depth, pair_offsets, pair_keys, pair_grades, threshold, "
     "n_keys, powers, score, new, out_item, out_key, out_seen) -> pairs: running key counts "
     "within segments."},
    {"greedy_ideal", greedy_ideal, METH_VARARGS,
     "greedy_ideal(offsets, rows, tie_keys, pair_offsets, pair_keys, pair_grades, threshold, "
     "n_keys, factor, width, gains, picked, distinct) -> most: a greedy ordering by keys."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native",
    "The inner loops of reading and joining a run, compiled (see rankmeter.data.hashing).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    BlockType = (PyTypeObject *)PyType_FromSpec(&block_spec);
    if (BlockType == NULL) return NULL;
    PyObject *made = PyModule_Create(&module);
    if (made != NULL && PyModule_AddIntConstant(made, "SCAN_SPAN", SCAN_SPAN) < 0) {
        Py_DECREF(made);
        return NULL;
    }
    return made;
}
