"""Messages as data: an error or warning keeps the keywords and field references it names, and is put into words
once, by the edge that prints it.

A :class:`Message` is text and parts: a :class:`Keyword` (an option of the library, ``include_unfinished=True``)
or a :class:`Field` (a field reference, ``summary.eval/return``, that a source may word its own way). ``str()`` of
a message is the library's words (the keyword backticked, the reference as written): what a Python user reads in
an exception, and what report files keep. The command line renders the same message with its flags
(``rl_reliable_logger.cli.flags``); a source renders its field references in its own words
(``trackers.base.messages.Hints``). Nothing rewrites a finished sentence.

Example:
    >>> message = said("Pass ", Keyword("include_unfinished", "True"), " to keep runs that lack ", Field("summary.x"))
    >>> str(message)
    'Pass `include_unfinished=True` to keep runs that lack summary.x'
    >>> message.words(keyword=lambda k: "--include-unfinished", field=lambda f: "tag x")
    'Pass --include-unfinished to keep runs that lack tag x'
    >>> str(said(Keyword("tracking_uri", bundle="client_kwargs"), " is not a store"))
    "`client_kwargs['tracking_uri']` is not a store"
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Field", "Keyword", "Message", "Part", "Said", "kw", "message_of", "said"]


@dataclass(frozen=True)
class Keyword:
    """A keyword of the library a message names: ``Keyword("reps")`` is ```reps=```, ``Keyword("ci", "1.5")``
    ```ci=1.5```; ``bundle`` names the mapping it is a key of (``client_kwargs``), ```client_kwargs['timeout']```."""

    name: str
    value: str | None = None
    bundle: str | None = None

    @property
    def token(self) -> str:
        """How flag tables know it: ``reps=``, ``ci=1.5``, ``client_kwargs['tracking_uri']``."""
        if self.bundle is not None:
            return f"{self.bundle}[{self.name!r}]"
        return f"{self.name}={'' if self.value is None else self.value}"

    def __str__(self) -> str:
        return f"`{self.token}`"


@dataclass(frozen=True)
class Field:
    """A field reference a message names (``summary.eval/return``); a source may say it its own way."""

    ref: str

    def __str__(self) -> str:
        return self.ref


#: What a message is made of.
Part = str | Keyword | Field


@dataclass(frozen=True)
class Message:
    """Text and the keywords and field references it names, put into words by :meth:`words`; ``str()`` is the
    library's words. Messages join (``+``, :meth:`join`) without losing their parts."""

    parts: tuple[Part, ...] = ()

    def __str__(self) -> str:
        return "".join(str(part) for part in self.parts)

    def words(
        self, *, keyword: Callable[[Keyword], str] | None = None, field: Callable[[Field], str] | None = None
    ) -> str:
        """The message in an edge's words: each keyword by ``keyword``, each field reference by ``field`` (the
        library's words for a part without one)."""
        out = []
        for part in self.parts:
            if isinstance(part, Keyword) and keyword is not None:
                out.append(keyword(part))
            elif isinstance(part, Field) and field is not None:
                out.append(field(part))
            else:
                out.append(str(part))
        return "".join(out)

    def with_fields(self, field: Callable[[Field], str]) -> Message:
        """The message with its field references in a source's words (its keywords kept as parts)."""
        return Message(tuple(field(p) if isinstance(p, Field) else p for p in self.parts))

    @property
    def keywords(self) -> tuple[Keyword, ...]:
        """The keywords it names, in order."""
        return tuple(p for p in self.parts if isinstance(p, Keyword))

    @property
    def fields(self) -> tuple[Field, ...]:
        """The field references it names, in order."""
        return tuple(p for p in self.parts if isinstance(p, Field))

    def __add__(self, other: Message | str) -> Message:
        return said(self, other)

    def __radd__(self, other: str) -> Message:
        return said(other, self)

    def __bool__(self) -> bool:
        return any(str(part) for part in self.parts)

    def join(self, items: Iterable[Message | Part]) -> Message:
        """``items`` with this message between each two (as ``str.join``)."""
        out: list[Message | Part] = []
        for i, item in enumerate(items):
            if i:
                out.append(self)
            out.append(item)
        return said(*out)

    def text(self) -> Said:
        """The library's words as text that keeps this message (a warning kept in a list of lines)."""
        return Said(self)

    def uncapitalized(self) -> Message:
        """The message with its first letter in lower case (to follow "..., or ")."""
        if not self.parts or not isinstance(self.parts[0], str) or not self.parts[0]:
            return self
        first = self.parts[0]
        return Message((first[0].lower() + first[1:], *self.parts[1:]))

    def rstrip(self) -> Message:
        """The message without whitespace at its end."""
        parts = list(self.parts)
        while parts and isinstance(parts[-1], str) and not parts[-1].rstrip():
            parts.pop()
        if parts and isinstance(parts[-1], str):
            parts[-1] = parts[-1].rstrip()
        return Message(tuple(parts))

    def endswith(self, suffix: str | tuple[str, ...]) -> bool:
        """Whether the library's words end with ``suffix``."""
        return str(self).endswith(suffix)


class Said(str):
    """The library's words of a message, as text that keeps the message: a warning stays a line (report files,
    provenance, sets of lines see the text) and the console still puts its keywords into flags. A line extended
    with ``+`` (a warning folded with the pairs it also flags) keeps the message, the added text a plain part; any
    other edit of the text (an f-string, ``replace``) is plain text again.

    Example:
        >>> line = said("pass ", Keyword("reps"), " again").text()
        >>> line == "pass `reps=` again", line.message.keywords
        (True, (Keyword(name='reps', value=None, bundle=None),))
        >>> (line + " (also flagged: B)").message.keywords
        (Keyword(name='reps', value=None, bundle=None),)
    """

    message: Message

    def __new__(cls, message: Message | str) -> Said:
        line = super().__new__(cls, str(message))
        line.message = message if isinstance(message, Message) else Message((message,) if message else ())
        return line

    def __add__(self, other: str) -> Said:
        if not isinstance(other, str):
            return NotImplemented
        return Said(said(self.message, message_of(other)))

    def __radd__(self, other: str) -> Said:
        if not isinstance(other, str):
            return NotImplemented
        return Said(said(message_of(other), self.message))

    def __reduce__(self) -> tuple[object, ...]:
        return (Said, (self.message,))


def said(*parts: Message | Part | BaseException) -> Message:
    """A message of ``parts``: text, keywords, field references, messages, or an exception (its message, its parts
    kept when it carries them).

    Example:
        >>> said("a ", said(Keyword("reps"), " b")).keywords
        (Keyword(name='reps', value=None, bundle=None),)
    """
    flat: list[Part] = []
    for part in parts:
        if isinstance(part, BaseException):
            part = message_of(part)
        if isinstance(part, Message):
            flat.extend(part.parts)
        elif part != "":
            flat.append(part)
    return Message(tuple(flat))


def message_of(err: BaseException | Message | str) -> Message:
    """What an exception (or text) says, as a message: the parts it was raised with, else its text."""
    if isinstance(err, Message):
        return err
    if isinstance(err, Said):
        return err.message
    if isinstance(err, str):
        return Message((err,) if err else ())
    carried = getattr(err, "message_parts", None)
    if isinstance(carried, Message) and str(carried) == str(err):
        return carried
    if isinstance(err, KeyError) and len(err.args) == 1:
        return message_of(err.args[0]) if isinstance(err.args[0], (str, Message)) else said(str(err))
    return said(str(err))


def kw(token: str, *, bundle: str | None = None) -> Keyword:
    """A keyword from how it is written, ``kw("include_unfinished=True")`` -> ``Keyword("include_unfinished",
    "True")`` (``kw("reps=")``: no value).

    Example:
        >>> kw("names='normalize'")
        Keyword(name='names', value="'normalize'", bundle=None)
    """
    name, _, value = token.partition("=")
    return Keyword(name, value or None, bundle)
