# cython: language_level=3, boundscheck=False, wraparound=False
"""Selected descendants of an element and their values, read from libxml2's tree in C.

Built on lxml's public C API, the documented way to extend lxml at C speed. Through lxml's Python
API, each value read costs an element proxy, a ``{namespace}name`` tag string and then the
text: several times what libxml2 spent parsing that element. A ``Selector`` walks the tree
itself and hands back only (field, value) pairs, or records that group them (one per
participant, say), so the readers loop over plain tuples and lists.
"""

from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.ref cimport Py_INCREF, PyObject
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport memset, strcmp, strlen

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.etreepublic cimport _Element

cetree.import_lxml__etree()

# How a matched element's value is read; texts as ``clean`` leaves them.
TEXT = 0  # its text (lxml's ``.text``)
CODED = 1  # (code, label), as ``code_and_label`` reads it
ELEMENT = 2  # the element itself
MARK = 3  # nothing (None): only that it occurs


cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil


cdef enum:
    MAX_RULES = 64  # a rule is a bit of a name's candidate mask
    CACHE_SLOTS = 256  # names remembered per walk (a register document has about a hundred)
    CACHE_FILL = 192


cdef struct NameCache:
    # libxml2 interns element names per document, so each distinct name is one pointer: the
    # rules a name can match are worked out once per name and walk, not once per element.
    const tree.xmlChar* names[CACHE_SLOTS]
    unsigned long long candidates[CACHE_SLOTS]
    int used


cdef struct Rule:
    const char* href  # NULL: no namespace
    const char* name
    const char* parent_href
    const char* parent_name  # NULL: any parent
    PyObject* field  # whatever the caller names the match by; kept alive by the selector
    int mode


cpdef clean(text):
    """Whitespace collapsed to single spaces (producers wrap lines at will); None when empty."""
    if text is None:
        return None
    value = text.strip()
    # Most values need only the strip; the scans are cheaper than always splitting.
    if "\n" in value or "  " in value or "\t" in value or "\r" in value:
        value = " ".join(value.split())
    return value or None


cdef inline bint _ascii_space(unsigned char byte) noexcept:
    # What str.isspace() counts as whitespace among ASCII characters.
    return byte == 32 or 9 <= byte <= 13 or 28 <= byte <= 31


cdef object _cleaned(const unsigned char* content):
    """``clean`` of libxml2's UTF-8 ``content``, without the Python string work for the common
    case: nothing to strip or collapse (edges are ASCII and not blank; no tab, line break or
    double space), where the text is taken as it is."""
    cdef size_t i, length = strlen(<const char*> content)
    if (length and content[0] < 128 and content[length - 1] < 128
            and not _ascii_space(content[0]) and not _ascii_space(content[length - 1])):
        for i in range(length):
            if content[i] == 9 or content[i] == 10 or content[i] == 13 or (content[i] == 32 and content[i + 1] == 32):
                break
        else:
            return PyUnicode_DecodeUTF8(<const char*> content, length, NULL)
    return clean(cetree.pyunicode(content))


cdef object _text(tree.xmlNode* node):
    """``clean(textOf(node))``: straight from the text node when it is the only one."""
    cdef tree.xmlNode* text = node.children
    if (text != NULL and text.type == tree.XML_TEXT_NODE and text.content != NULL
            and (text.next == NULL or text.next.type in (tree.XML_ELEMENT_NODE, tree.XML_COMMENT_NODE, tree.XML_PI_NODE))):
        return _cleaned(<const unsigned char*> text.content)
    return clean(cetree.textOf(node))


cdef inline bint _same(const char* a, const char* b) noexcept:
    if a == NULL or b == NULL:
        return a == b
    return strcmp(a, b) == 0


cdef inline bint _named(tree.xmlNode* node, const char* href, const char* name) noexcept:
    # The first byte settles most comparisons without a call.
    return (node.name[0] == name[0] and strcmp(<const char*> node.name, name) == 0
            and _same(<const char*> cetree._getNs(node), href))


cdef tuple _coded(tree.xmlNode* node):
    code = label = None
    cdef bint seen_code = False
    cdef tree.xmlNode* child = node.children
    while child != NULL:
        if child.type == tree.XML_ELEMENT_NODE:
            if not seen_code and cetree._getNs(child) == NULL and strcmp(<const char*> child.name, b"code") == 0:
                code, seen_code = _text(child), True
        elif child.type == tree.XML_COMMENT_NODE and label is None and child.content != NULL:
            label = _cleaned(<const unsigned char*> child.content)
        child = child.next
    return code, label


def code_and_label(_Element element):
    """An XJustiz code: the text of its first ``code`` child and the label of its first comment
    that is not blank, the one producers put next to it; (None, None) for no element."""
    return _coded(element._c_node) if element is not None else (None, None)


cdef inline tree.xmlNode* _next_element(tree.xmlNode* node, tree.xmlNode* top) noexcept:
    """The element after ``node`` in document order within ``top``'s subtree, or NULL."""
    cdef tree.xmlNode* child = node.children
    while child != NULL:
        if child.type == tree.XML_ELEMENT_NODE:
            return child
        child = child.next
    while node != top:
        child = node.next
        while child != NULL:
            if child.type == tree.XML_ELEMENT_NODE:
                return child
            child = child.next
        node = node.parent
    return NULL


def _split(clark):
    if clark.startswith("{"):
        href, _, name = clark[1:].partition("}")
        return href.encode(), name.encode()
    return None, clark.encode()


cdef dict _split_names = {}  # Clark name -> (namespace, local name), encoded: a few dozen names


cdef tree.xmlNode* _child(tree.xmlNode* parent, clark) except? NULL:
    """The first child element of ``parent`` named ``clark``, or NULL."""
    parts = _split_names.get(clark)
    if parts is None:
        parts = _split_names[clark] = _split(clark)
    href, name = parts
    cdef const char* c_href = NULL if href is None else <const char*> href
    cdef const char* c_name = <const char*> name
    cdef tree.xmlNode* child = parent.children
    while child != NULL:
        if child.type == tree.XML_ELEMENT_NODE and _named(child, c_href, c_name):
            return child
        child = child.next
    return NULL


def descend(_Element element, *tags):
    """The first child of the first child … along ``tags`` (names in Clark notation), or None.

    Only the element found becomes a Python object, not the siblings passed on the way."""
    if element is None:
        return None
    cdef tree.xmlNode* node = element._c_node
    for tag in tags:
        node = _child(node, tag)
        if node == NULL:
            return None
    return cetree.elementFactory(element._doc, node)


def text_of(_Element element):
    """The text of ``element``, as ``clean`` leaves it; None for no element."""
    return _text(element._c_node) if element is not None else None


def child_text(_Element element, tag):
    """The text of the first child named ``tag``, as ``clean`` leaves it; None if there is none."""
    if element is None:
        return None
    cdef tree.xmlNode* node = _child(element._c_node, tag)
    return _text(node) if node != NULL else None


cdef class Children:
    """The direct children of an element by name: ``get(tag)`` is the first child named ``tag``."""

    cdef _Element _element

    def __cinit__(self, _Element element):
        self._element = element

    def get(self, tag):
        if self._element is None:
            return None
        cdef tree.xmlNode* node = _child(self._element._c_node, tag)
        return cetree.elementFactory(self._element._doc, node) if node != NULL else None


cdef class Selector:
    """Descendants by name, each rule giving the field a match stands for and how its value is read.

    ``rules`` maps a name in Clark notation, or a (parent name, name) pair for an element only
    below that parent, to ``(field, mode)``; the first rule that matches an element counts."""

    cdef Rule* _rules
    cdef int _count
    cdef list _keep  # the encoded names and fields the rules point to

    def __cinit__(self, dict rules):
        if len(rules) > MAX_RULES:
            raise ValueError(f"at most {MAX_RULES} rules")
        self._keep = []
        self._count = 0
        self._rules = <Rule*> PyMem_Malloc(len(rules) * sizeof(Rule))
        if self._rules == NULL:
            raise MemoryError()
        cdef Rule* rule
        for key, (field, mode) in rules.items():
            parent, name = key if isinstance(key, tuple) else (None, key)
            href, local = _split(name)
            parent_href, parent_local = _split(parent) if parent is not None else (None, None)
            self._keep.extend((href, local, parent_href, parent_local, field))
            rule = &self._rules[self._count]
            rule.href = <const char*> href if href is not None else NULL
            rule.name = <const char*> local
            rule.parent_href = <const char*> parent_href if parent_href is not None else NULL
            rule.parent_name = <const char*> parent_local if parent_local is not None else NULL
            rule.field = <PyObject*> field
            rule.mode = mode
            self._count += 1

    def __dealloc__(self):
        PyMem_Free(self._rules)

    cdef unsigned long long _candidates(self, const tree.xmlChar* name) noexcept:
        """The rules whose local name is ``name``, as a bit mask."""
        cdef unsigned long long mask = 0
        cdef int i
        for i in range(self._count):
            if name[0] == self._rules[i].name[0] and strcmp(<const char*> name, self._rules[i].name) == 0:
                mask |= 1ULL << i
        return mask

    cdef Rule* _match(self, tree.xmlNode* node, NameCache* cache) noexcept:
        """The first rule that ``node`` matches, or NULL."""
        cdef const tree.xmlChar* name = node.name
        cdef size_t slot = (<size_t> name >> 4) % CACHE_SLOTS
        cdef unsigned long long mask
        while True:
            if cache.names[slot] == name:
                mask = cache.candidates[slot]
                break
            if cache.names[slot] == NULL:
                mask = self._candidates(name)
                if cache.used < CACHE_FILL:
                    cache.names[slot] = name
                    cache.candidates[slot] = mask
                    cache.used += 1
                break
            slot = (slot + 1) % CACHE_SLOTS
        cdef Rule* rule
        while mask:
            rule = &self._rules[__builtin_ctzll(mask)]
            mask &= mask - 1
            if not _same(<const char*> cetree._getNs(node), rule.href):
                continue
            if rule.parent_name != NULL and not (
                node.parent != NULL and node.parent.type == tree.XML_ELEMENT_NODE
                and _named(node.parent, rule.parent_href, rule.parent_name)
            ):
                continue
            return rule
        return NULL

    cdef object _value(self, Rule* rule, _Element element, tree.xmlNode* node):
        if rule.mode == TEXT:
            return _text(node)
        if rule.mode == CODED:
            return _coded(node)
        if rule.mode == ELEMENT:
            return cetree.elementFactory(element._doc, node)
        return None

    def select(self, _Element element not None):
        """``[(field, value), …]`` for the matching descendants of ``element``, in document order."""
        cdef list found = []
        cdef tree.xmlNode* top = element._c_node
        cdef tree.xmlNode* node = _next_element(top, top)
        cdef Rule* rule
        cdef NameCache cache
        memset(&cache, 0, sizeof(cache))
        while node != NULL:
            rule = self._match(node, &cache)
            if rule != NULL:
                found.append((<object> rule.field, self._value(rule, element, node)))
            node = _next_element(node, top)
        return found

    def records(self, _Element element not None, Py_ssize_t start, Py_ssize_t width, frozenset sequence=frozenset()):
        """The matches grouped into records, one per match of field ``start``, in document order.

        Fields are slot numbers below ``width``. A record is a list of ``width + 1`` slots: the
        start's value at ``start``; for every other field the first value that is not None;
        and last, the list of ``(field, value)`` of the fields in ``sequence``, in order (for
        what repeats, or where the order of different fields matters). Matches before the first
        start belong to no record and are dropped."""
        cdef list found = []
        cdef list record = None
        cdef tree.xmlNode* top = element._c_node
        cdef tree.xmlNode* node = _next_element(top, top)
        cdef Rule* rule
        cdef Py_ssize_t field, slot
        cdef int i
        cdef NameCache cache
        memset(&cache, 0, sizeof(cache))
        if not 0 <= start < width:
            raise ValueError(f"start {start} is not a slot below {width}")
        for i in range(self._count):
            field = <object> self._rules[i].field
            if not 0 <= field < width:
                raise ValueError(f"field {field} is not a slot below {width}")
        while node != NULL:
            rule = self._match(node, &cache)
            if rule != NULL:
                field = <object> rule.field
                if field == start:
                    record = PyList_New(width + 1)
                    for slot in range(width):
                        Py_INCREF(None)
                        PyList_SET_ITEM(record, slot, None)
                    sequence_values = []
                    Py_INCREF(sequence_values)
                    PyList_SET_ITEM(record, width, sequence_values)
                    record[start] = self._value(rule, element, node)
                    found.append(record)
                elif record is not None:
                    if field in sequence:
                        (<list> record[width]).append((field, self._value(rule, element, node)))
                    elif record[field] is None:
                        record[field] = self._value(rule, element, node)
            node = _next_element(node, top)
        return found
