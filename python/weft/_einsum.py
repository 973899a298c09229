"""weft.einsum (NumPy's subscripts) and weft.einsum_tree (the seed's bracketed trees).

Both run an einsum tree through the library's tree pass (optimize_einsum_tree) and its execution
(EinsumTreeOperation) in float32 or float64. weft.einsum picks the tree itself, pairwise and
greedily: of all pairs of the remaining tensors it contracts first the pair whose contraction
touches the fewest index combinations (the product of the sizes of the two tensors' indices,
which is its count of multiply-adds), keeping the indices later tensors or the output need; ties
go to the pair met first. Intermediate index orders are left to the tree pass.
"""
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
        shape = _arrays.shape_of(operand)
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


def contraction_tree(inputs, output, sizes, first_pairs=()):
    """(tree text, the operands' order as its leaves, the size of every id) for the letters of
    `inputs` -> `output`: the pairs `first_pairs` contracted first, then greedily (module doc)."""
    id_of = {}
    for letter in "".join(inputs) + output:
        id_of.setdefault(letter, len(id_of))
    # (letters, text as an operand, operand indices in leaf order)
    nodes = [(term, _ids_text(id_of[c] for c in term), [i]) for i, term in enumerate(inputs)]

    def merge(i, j):
        """Contracts nodes i and j into one, keeping what the others or the output need."""
        nonlocal nodes, root_text
        union = nodes[i][0] + "".join(c for c in nodes[j][0] if c not in nodes[i][0])
        rest = [node for k, node in enumerate(nodes) if k not in (i, j)]
        needed = output + "".join(node[0] for node in rest)
        kept = "".join(c for c in union if c in needed) if rest else output
        root_text = f"{nodes[i][1]},{nodes[j][1]}->{_ids_text(id_of[c] for c in kept)}"
        nodes = rest + [(kept, f"[{root_text}]", nodes[i][2] + nodes[j][2])]

    root_text = None
    for first, second in first_pairs:
        positions = [k for k, node in enumerate(nodes) if node[2][0] in (first, second) and len(node[2]) == 1]
        merge(*positions)
    while len(nodes) > 1:
        best = None
        for i in range(len(nodes)):
            for j in range(i + 1, len(nodes)):
                cost = math.prod(sizes[c] for c in set(nodes[i][0] + nodes[j][0]))
                if best is None or cost < best[0]:
                    best = (cost, i, j)
        merge(best[1], best[2])
    return root_text, nodes[0][2], [sizes[c] for c in sorted(id_of, key=id_of.get)]


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
    if out is None:
        out = _arrays.empty_like_kind(operands[0], [sizes[c] for c in output], kind)
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
