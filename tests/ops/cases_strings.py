"""Single-operator cases for the string operators on string inputs (ONNX Runtime's outputs are
object arrays; make_op_cases.py saves them as fixed-width unicode): StringConcat, StringSplit,
RegexFullMatch, Equal on strings, StringNormalizer without case change (ONNX Runtime refuses the
others where its locale is missing). StringSplit avoids tabs, whitespace after the last split and
an empty string with a delimiter: there ONNX Runtime (spaces only, the rest trimmed, no piece at
all for "") departs from ONNX's reference (Python's str.split), which collage follows.
"""
import numpy as np

from op_case import Case


def s(*v, shape=None):
    a = np.array(v, dtype=object)
    return a.reshape(shape) if shape else a


def cases():
    words = s("caf\u00e9", "", "a b", "x--y--z", "\u65e5\u672c", " lead", shape=(2, 3))
    yield Case("string_concat_broadcast", "StringConcat", {"x": words, "y": s("!", "?", "")},
               opset=20)
    yield Case("string_split_delimiter", "StringSplit",
               {"x": s("caf\u00e9", "--", "a b", "x--y--z", "\u65e5--\u672c", "--lead--",
                       shape=(2, 3))},
               {"delimiter": "--"}, num_outputs=2, opset=20)
    yield Case("string_split_whitespace_maxsplit", "StringSplit",
               {"x": s("  a  b c", "one", "", "x y  z")}, {"maxsplit": 1}, num_outputs=2,
               opset=20)
    yield Case("regex_full_match_digits", "RegexFullMatch",
               {"x": s("123", "12a", "", "\u0661\u0662", "007")}, {"pattern": r"\d+"}, opset=20)
    yield Case("equal_strings_broadcast", "Equal",
               {"a": words, "b": s("caf\u00e9", "", "b", shape=(1, 3))}, opset=19)
    yield Case("string_normalizer_stopwords_case_sensitive", "StringNormalizer",
               {"x": s("The", "the", "cat", "THE", "sat")},
               {"stopwords": ["the", "sat"], "is_case_sensitive": 1}, opset=10)
