"""weft.einsum (NumPy's subscripts) and weft.einsum_tree (the seed's bracketed trees).

Both run an einsum tree through the library's tree pass (optimize_einsum_tree) and its execution
(EinsumTreeOperation) in float32 or float64. weft.einsum picks the tree itself: the pairwise
contraction tree with the fewest multiply-adds (a contraction of two tensors costs the product of
the sizes of all their indices), found exhaustively by dynamic programming over the subsets of
operands for up to EXHAUSTIVE_OPERANDS operands, greedily beyond (of the pairs that share an
index, the cheapest first). Each contraction keeps the indices later tensors or the output need;
intermediate index orders are left to the tree pass.
"""
import functools
import math

import numpy as np

from . import _arrays, _weft


def _parse_subscripts(subscripts, count):
    if not isinstance(subscripts, str):
        raise TypeError("argument 'subscripts' must be a string such as 'ik,kj->ij'")
    text = subscripts.replace(" ", "")
    if "." in text:
        raise ValueError("argument 'subscripts': '...' (ellipsis) is not supported; name every index")
    inputs_text, arrow, output = text.partition("->")
    inputs = inputs_text.split(",")
    if len(inputs) != count:
        raise ValueError(f"argument 'subscripts' names {len(inputs)} operands, {count} were given")
    for position, term in enumerate(inputs):
        if not term.isalpha() and term != "":
            raise ValueError(f"argument 'subscripts': operand {position} has {term!r}; indices are letters")
        if len(set(term)) != len(term):
            raise ValueError(f"argument 'subscripts': operand {position} repeats an index in {term!r} "
                             "(diagonals are not supported)")
    if not arrow:
        letters = "".join(inputs)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(set(output)) != len(output) or not (output.isalpha() or output == ""):
        raise ValueError(f"argument 'subscripts': output {output!r} must name distinct letters")
    missing = set(output) - set("".join(inputs))
    if missing:
        raise ValueError(f"argument 'subscripts': output index {''.join(sorted(missing))!r} is in no operand")
    if output == "":
        raise ValueError("argument 'subscripts': a scalar output is not supported; keep one index")
    return inputs, output


def _sizes_of(terms, operands, names):
    """Each index's extent, from the operands' shapes (which must agree); a term is a string of
    letters or a list of ids."""
    sizes = {}
    for term, operand, name in zip(terms, operands, names):
        shape = _arrays.shape_of(operand, name)
        if len(shape) != len(term):
            raise ValueError(f"argument '{name}' has {len(shape)} dimensions, its subscripts {term!r} {len(term)}")
        for index, extent in zip(term, shape):
            if sizes.setdefault(index, extent) != extent:
                raise ValueError(f"argument '{name}': index {index!r} has extent {extent}, elsewhere {sizes[index]}")
    return sizes


def _ids_text(ids):
    return "[" + ",".join(str(i) for i in ids) + "]"


def _lone_indices(inputs, output):
    """Per operand, the indices that no other operand and not the output has: weft's contractions
    sum only over indices both operands share, so these are summed first, against a tensor of ones."""
    lone = []
    for position, term in enumerate(inputs):
        others = output + "".join(t for k, t in enumerate(inputs) if k != position)
        lone.append("".join(c for c in term if c not in others))
    return lone


EXHAUSTIVE_OPERANDS = 8


def _kept_letters(letters, needed):
    return "".join(c for c in letters if c in needed)


@functools.lru_cache(maxsize=256)
def _cheapest_pairing(terms, output, sizes):
    """The cheapest binary tree over `terms` (nested pairs of term positions), exhaustively."""
    count = len(terms)
    full = (1 << count) - 1
    letters_in = {}
    for mask in range(1, full + 1):
        letters_in[mask] = set("".join(t for k, t in enumerate(terms) if mask >> k & 1))
    size_of = dict(sizes)
    kept = {mask: (set(output) if mask == full else letters_in[mask] & (set(output) | letters_in[full ^ mask]))
            for mask in range(1, full + 1)}
    best = {1 << k: (0, k) for k in range(count)}
    for mask in sorted(range(1, full + 1), key=lambda m: bin(m).count("1")):
        if mask in best:
            continue
        choice = None
        part = (mask - 1) & mask
        while part:
            other = mask ^ part
            if part < other:  # each split once
                cost = best[part][0] + best[other][0] + math.prod(size_of[c] for c in kept[part] | kept[other])
                if choice is None or cost < choice[0]:
                    choice = (cost, (best[part][1], best[other][1]))
            part = (part - 1) & mask
        best[mask] = choice
    return best[full][1]


def _greedy_pairing(terms, output, sizes):
    """Nested pairs of term positions, cheapest pair sharing an index first (any pair if none)."""
    size_of = dict(sizes)
    nodes = [(term, k) for k, term in enumerate(terms)]
    while len(nodes) > 1:
        best = None
        for i in range(len(nodes)):
            for j in range(i + 1, len(nodes)):
                shared = bool(set(nodes[i][0]) & set(nodes[j][0]))
                cost = (not shared, math.prod(size_of[c] for c in set(nodes[i][0] + nodes[j][0])))
                if best is None or cost < best[0]:
                    best = (cost, i, j)
        _, i, j = best
        rest = [node for k, node in enumerate(nodes) if k not in (i, j)]
        needed = output + "".join(node[0] for node in rest)
        nodes = rest + [(_kept_letters(nodes[i][0] + nodes[j][0], needed), (nodes[i][1], nodes[j][1]))]
    return nodes[0][1]


def contraction_tree(inputs, output, sizes, first_pairs=()):
    """(tree text, the operands' order as its leaves, the size of every id) for the letters of
    `inputs` -> `output`: the pairs `first_pairs` contracted first, then the rest as the module
    doc says."""
    id_of = {}
    for letter in "".join(inputs) + output:
        id_of.setdefault(letter, len(id_of))
    # The tensors not yet contracted: (letters, text as an operand, operand positions in leaf order)
    nodes = {k: (term, _ids_text(id_of[c] for c in term), [k]) for k, term in enumerate(inputs)}
    root_text = None

    def merge(i, j):
        """Contracts tensors i and j into one (under key i), keeping what the others or the output need."""
        nonlocal root_text
        left, right = nodes.pop(i), nodes.pop(j)
        union = left[0] + "".join(c for c in right[0] if c not in left[0])
        kept = _kept_letters(union, output + "".join(node[0] for node in nodes.values())) if nodes else output
        root_text = f"{left[1]},{right[1]}->{_ids_text(id_of[c] for c in kept)}"
        nodes[i] = (kept, f"[{root_text}]", left[2] + right[2])
        return i

    for first, second in first_pairs:
        merge(first, second)
    keys = list(nodes)
    terms = tuple(nodes[k][0] for k in keys)
    sorted_sizes = tuple(sorted(sizes.items()))
    pairing = (_cheapest_pairing if len(keys) <= EXHAUSTIVE_OPERANDS else _greedy_pairing)(terms, output, sorted_sizes)

    def contract(pair):
        if isinstance(pair, int):
            return keys[pair]
        return merge(contract(pair[0]), contract(pair[1]))

    if len(keys) > 1:
        contract(pairing)
    return root_text, next(iter(nodes.values()))[2], [sizes[c] for c in sorted(id_of, key=id_of.get)]


def einsum(subscripts, *operands, out=None):
    """numpy.einsum's result for float32 or float64 operands (all of one type), computed by weft.

    Subscripts as NumPy's ('abdc,ebfd->aefc', implicit output allowed), without '...', repeated
    indices within one operand, or a scalar output. Operands: C-contiguous NumPy arrays or torch
    tensors, read in place; the result is of the first operand's kind, or written into `out`.
    """
    if not operands:
        raise ValueError("weft.einsum needs at least one operand")
    inputs, output = _parse_subscripts(subscripts, len(operands))
    names = [f"operands[{i}]" for i in range(len(operands))]
    sizes = _sizes_of(inputs, operands, names)
    kind = _arrays.dtype_name(operands[0], "operands[0]")
    # Checked before the copy below, which would take (and convert into) any TPP type.
    if kind == "bf16":
        raise TypeError("weft.einsum computes in float32 and float64, not bfloat16")
    if out is None:
        out = _arrays.empty_like_kind(operands[0], [sizes[c] for c in output], kind)
    elif _arrays.dtype_name(out, "out") != kind:
        raise TypeError("argument 'out' holds another type than the operands")
    if len(operands) == 1 and inputs[0] == output:
        from . import tpp
        return tpp.unary("copy", operands[0], out)
    if len(operands) == 1 and sorted(inputs[0]) == sorted(output):
        id_of = {letter: i for i, letter in enumerate(inputs[0])}
        text = f"{_ids_text(range(len(inputs[0])))}->{_ids_text(id_of[c] for c in output)}"
        _weft.run_einsum_tree(text, [sizes[c] for c in inputs[0]], list(operands), out)
        return out
    inputs, operands, first_pairs = list(inputs), list(operands), []
    ones_type = np.float64 if kind == "f64" else np.float32
    for position, lone in enumerate(_lone_indices(inputs, output)):
        if lone:
            first_pairs.append((position, len(inputs)))
            inputs.append(lone)
            operands.append(np.ones([sizes[c] for c in lone], dtype=ones_type))
    text, order, size_list = contraction_tree(inputs, output, sizes, first_pairs)
    _weft.run_einsum_tree(text, size_list, [operands[i] for i in order], out)
    return out


def einsum_tree(tree, *operands, out=None):
    """Runs an einsum tree in the seed notation, e.g.

        '[[8,4],[7,3,8]->[7,3,4]],[[[2,6,7],[1,5,6]->[1,2,5,7]],[0,5]->[0,1,2,7]]->[0,1,2,3,4]'

    on `operands` (leaf i is operands[i], leaves numbered left to right; a tensor's ids are its
    dimensions, row-major, the last unit-stride). Dimension sizes come from the operands' shapes.
    """
    if not isinstance(tree, str):
        raise TypeError("argument 'tree' must be a string in the seed notation")
    leaves, root = _weft.einsum_tree_signature(tree)
    if len(leaves) != len(operands):
        raise ValueError(f"argument 'tree' has {len(leaves)} leaves, {len(operands)} operands were given")
    names = [f"operands[{i}]" for i in range(len(operands))]
    extents = _sizes_of(leaves, operands, names)
    missing = [i for i in root if i not in extents]
    if missing:
        raise ValueError(f"argument 'tree': output dimension {missing[0]} is in no leaf")
    sizes = [extents.get(i, 1) for i in range(max(extents, default=0) + 1)]
    if out is None:
        out = _arrays.empty_like_kind(operands[0], [sizes[i] for i in root], _arrays.dtype_name(operands[0], "operands[0]"))
    _weft.run_einsum_tree(tree, sizes, list(operands), out)
    return out
