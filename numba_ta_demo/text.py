"""The training text: the built-in corpus (the Zen of Python), reading a text file, and the vocabulary."""

from __future__ import annotations

import codecs
import contextlib
import io
from pathlib import Path

import numpy as np

__all__ = ["TextError", "zen_of_python", "validate_text", "load_text", "Vocab"]


class TextError(ValueError):
    """The training text cannot be used (missing, unreadable, not UTF-8, too small).

    The message is one line meant for the user, for example
    ``file not found: notes.txt``.
    """


def zen_of_python():
    """Return the Zen of Python, decoded from the standard library's :mod:`this`.

    Importing :mod:`this` prints the text; that output is captured and dropped,
    and the text is decoded from ``this.s`` (rot13) instead.

    Returns
    -------
    str
        The poem, about 850 characters, starting with ``"The Zen of Python"``.

    Examples
    --------
    >>> from numba_ta_demo import zen_of_python
    >>> zen_of_python().splitlines()[2]
    'Beautiful is better than ugly.'
    """
    with contextlib.redirect_stdout(io.StringIO()):
        import this
    return codecs.decode(this.s, "rot13")


def validate_text(text, *, source="text"):
    """Check that `text` can train the model: at least two distinct characters.

    Parameters
    ----------
    text : str
        The training text.
    source : str, optional
        What to call the text in error messages (for example its file name).

    Returns
    -------
    str
        `text`, unchanged.

    Raises
    ------
    TextError
        If `text` is not a ``str``, is empty, or has fewer than two distinct
        characters (there is nothing to predict).

    Examples
    --------
    >>> from numba_ta_demo import validate_text
    >>> validate_text("ab")
    'ab'
    >>> validate_text("aaaa")
    Traceback (most recent call last):
    ...
    numba_ta_demo.text.TextError: text has only one distinct character ('a'); at least 2 are needed
    """
    if not isinstance(text, str):
        raise TextError(f"{source} must be a str, got {type(text).__name__}")
    if not text:
        raise TextError(f"{source} is empty")
    distinct = set(text)
    if len(distinct) < 2:
        raise TextError(f"{source} has only one distinct character ({text[0]!r}); at least 2 are needed")
    return text


def load_text(path):
    """Read a UTF-8 text file for training.

    A UTF-8 byte-order mark, if present, is dropped.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read.

    Returns
    -------
    str
        The decoded text.

    Raises
    ------
    TextError
        If the file does not exist, is a directory, cannot be read, is not valid
        UTF-8, is empty, or has fewer than two distinct characters.  The message
        names the file and the problem in one line.

    Examples
    --------
    >>> import os, tempfile
    >>> from numba_ta_demo import load_text
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "t.txt")
    ...     with open(p, "wb") as f:
    ...         _ = f.write("naïve café".encode("utf-8"))
    ...     load_text(p)
    'naïve café'
    """
    p = Path(path)
    name = str(path)
    try:
        if p.is_dir():
            raise TextError(f"is a directory, not a file: {name}")
        data = p.read_bytes()
    except FileNotFoundError:
        raise TextError(f"file not found: {name}") from None
    except IsADirectoryError:
        raise TextError(f"is a directory, not a file: {name}") from None
    except PermissionError:
        raise TextError(f"permission denied: {name}") from None
    except OSError as e:
        raise TextError(f"cannot read {name}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TextError(f"not a UTF-8 text file: {name} (byte 0x{data[e.start]:02x} at offset {e.start})") from None
    return validate_text(text, source=f"file {name}")


class Vocab:
    """The characters of a text, each mapped to an integer id.

    Parameters
    ----------
    text : str
        The text whose distinct characters form the vocabulary (sorted).

    Attributes
    ----------
    chars : tuple of str
        The characters, in id order.

    Raises
    ------
    TextError
        If `text` has fewer than two distinct characters.

    Examples
    --------
    >>> from numba_ta_demo import Vocab
    >>> v = Vocab("hello")
    >>> v.chars
    ('e', 'h', 'l', 'o')
    >>> v.encode("hole")
    array([1, 3, 2, 0])
    >>> v.decode([2, 0])
    'le'
    """

    def __init__(self, text):
        validate_text(text)
        self.chars = tuple(sorted(set(text)))
        self._index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        """Return the number of characters."""
        return len(self.chars)

    def __repr__(self):
        """Return ``Vocab(<n> characters)``."""
        return f"Vocab({len(self)} characters)"

    def __contains__(self, char):
        """Return whether `char` is in the vocabulary."""
        return char in self._index

    def encode(self, text):
        """Map characters to ids.

        Parameters
        ----------
        text : str
            Characters that are all in the vocabulary.

        Returns
        -------
        ids : (len(text),) ndarray of int64

        Raises
        ------
        KeyError
            If a character is not in the vocabulary.
        """
        return np.fromiter((self._index[c] for c in text), dtype=np.int64, count=len(text))

    def decode(self, ids):
        """Map ids back to characters.

        Parameters
        ----------
        ids : (n,) array_like of int
            Ids in ``range(len(self))``.

        Returns
        -------
        str
        """
        return "".join(self.chars[int(i)] for i in ids)
