"""Where each row of a CSV file starts: line numbers, rows that cannot be read, the encoding.

pyarrow reads a Swiss Dwellings file fast, but counts records, not lines: a
blank line, a quoted field holding a line break or a quote never closed shift
every later row number, and one undecodable byte stops the whole read. This
pre-pass over the bytes (numpy, a block at a time) finds what pyarrow will see
so the reader can give every row its line number (docs/data-format.md: the
header is line 1):

- **blank lines** (empty, or spaces and tabs only) are lines, not rows;
- a **quoted field spanning lines** makes one row, numbered by its first line;
- a **row that cannot be read** is left out of what pyarrow reads and becomes
  a rejection of its own: a quote that is never closed, or closed in the
  middle of a field (``unreadable_row``), a NUL byte (``nul_byte``), or bytes
  that are no text in the file's encoding (``undecodable_row``).

A file that is not valid UTF-8 is read as cp1252 (Windows Latin-1, of which
ISO Latin-1 text is all but five bytes), with a warning.

The fast path is vectorised: a line whose quotes pair up at field boundaries
(``,"...",``) is one row as it stands. Only lines with other quotes go through
a small state machine that follows pyarrow's own rules, more strictly: a
closing quote must end its field.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

UNREADABLE_ROW = "unreadable_row"
NUL_BYTE = "nul_byte"
UNDECODABLE_ROW = "undecodable_row"

UTF8, CP1252 = "utf-8", "cp1252"
#: Bytes cp1252 leaves undefined: a row holding one is no cp1252 text.
CP1252_UNDEFINED = (0x81, 0x8D, 0x8F, 0x90, 0x9D)

_QUOTE, _COMMA, _LF, _CR, _NUL = 0x22, 0x2C, 0x0A, 0x0D, 0x00
_SPACE, _TAB = 0x20, 0x09


@dataclass(frozen=True)
class BadRow:
    """A row left out of what pyarrow reads, and why."""

    line: int
    reason: str
    field: str | None  # the column at fault, where one is
    message: str
    text: str  # the row as text (undecodable bytes replaced), for its ids


@dataclass
class LineScan:
    """What the pre-pass learnt about a file (see the module doc).

    ``records``: rows pyarrow will read (header excluded); ``bad``: rows left
    out, by line; ``skipped_lines``: lines (from 2) that start no row pyarrow
    reads — blank lines, the further lines of a row spanning several, bad
    rows; ``omit``: byte ranges of blank-with-spaces lines and bad rows, which
    pyarrow must not see; ``multiline``: some row spans lines.
    """

    path: Path
    encoding: str
    records: int
    bad: list[BadRow]
    skipped_lines: np.ndarray
    omit: list[tuple[int, int]]
    multiline: bool

    @property
    def rows(self) -> int:
        """Rows of the file: read by pyarrow, or left out as bad."""
        return self.records + len(self.bad)

    @property
    def warning(self) -> str | None:
        """One line to show when the file is not UTF-8."""
        if self.encoding == UTF8:
            return None
        return f"{self.path}: not UTF-8 text; read as {self.encoding} (Windows Latin-1)"

    def line_numbers(self, ordinals: np.ndarray) -> np.ndarray:
        """The line of each row pyarrow reads, from its ordinal (0 = the first
        row after the header): the ordinal-th line from 2 not skipped."""
        k = np.asarray(ordinals, dtype=np.int64)
        skipped = self.skipped_lines
        if len(skipped) == 0:
            return k + 2
        before = skipped - np.arange(len(skipped), dtype=np.int64) - 2
        return k + 2 + np.searchsorted(before, k, side="right")

    def source(self):
        """What pyarrow should read: the path, or a stream without the omitted bytes."""
        if not self.omit:
            return str(self.path)
        return io.BufferedReader(_Omitting(self.path, self.omit), buffer_size=1 << 20)


def scan_lines(path: str | os.PathLike[str], columns: tuple[str, ...], chunk_bytes: int = 32 << 20) -> LineScan:
    """Scan a CSV file whose header has ``columns`` (see :class:`LineScan`)."""
    path = Path(path)
    scanner = _Scanner(columns, chunk_bytes)
    with pa.input_stream(str(path), compression="detect") as stream:
        carry = b""
        while True:
            block = stream.read(chunk_bytes)
            buf = carry + block
            used = scanner.feed(buf, at_end=not block)
            carry = buf[used:]
            if not block:
                break
    return scanner.finish(path)


# --- the scanner ----------------------------------------------------------------


@dataclass
class _Block:
    """The complete lines of one buffer: byte starts, content ends (before the
    line break) and terminator positions; ``a`` is the buffer as bytes."""

    buf: bytes
    a: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    terms: np.ndarray
    quotes: np.ndarray
    at_end: bool

    @property
    def lines(self) -> int:
        return len(self.terms)


@dataclass
class _Scanner:
    columns: tuple[str, ...]
    chunk_bytes: int
    line: int = 1  # number of the next line to read
    offset: int = 0  # file offset of the next buffer
    records: int = 0
    multiline: bool = False
    utf8: bool = True
    skipped: list[np.ndarray] = field(default_factory=list)
    bad: list[tuple[BadRow, tuple[int, int]]] = field(default_factory=list)
    omit: list[tuple[int, int]] = field(default_factory=list)
    # Rows with bytes cp1252 leaves undefined: bad only if the file is not UTF-8.
    not_cp1252: list[tuple[BadRow, tuple[int, int]]] = field(default_factory=list)

    def feed(self, buf: bytes, at_end: bool) -> int:
        """Scan the complete lines of ``buf``; return how many bytes were used."""
        block = _split_lines(buf, at_end)
        first = 0
        if self.line == 1 and block.lines:
            first = 1  # the header
        kind, span, used_lines = self._segment(block, first)
        self._check_bytes(block, kind, span, first, used_lines)
        self._account(block, kind, span, first, used_lines)
        used = int(block.terms[used_lines - 1]) + 1 if used_lines else 0
        self.line += used_lines
        self.offset += used
        return min(used, len(buf))

    def _segment(self, block: _Block, first: int) -> tuple[np.ndarray, np.ndarray, int]:
        """Per line: its kind (row start, blank, further line of a row, bad) and,
        for row starts, the index of the row's last line."""
        n = block.lines
        if n == 0:
            return np.zeros(0, dtype=np.int8), np.zeros(0, dtype=np.int64), 0
        kind = np.full(n, _START, dtype=np.int8)
        kind[:first] = _HEADER
        span = np.arange(n)
        length = block.ends - block.starts
        kind[first:][length[first:] == 0] = _BLANK
        indented = np.flatnonzero((length > 0) & np.isin(block.a[np.minimum(block.starts, len(block.a) - 1)],
                                                          (_SPACE, _TAB)))
        for j in indented[indented >= first].tolist():
            if not block.buf[block.starts[j]:block.ends[j]].strip(b" \t"):
                kind[j] = _BLANK_OMITTED
        used = n
        for j in _irregular_quote_lines(block, first).tolist():
            if kind[j] != _START:
                continue  # a further line of an earlier row
            outcome = _follow_quotes(block, j, len(self.columns))
            if outcome is None:  # the row runs past this buffer
                if len(block.buf) - block.starts[j] <= self.chunk_bytes:
                    used = j
                    break
                outcome = f"the quote opening {{}} runs on for more than {self.chunk_bytes:,} bytes", 0
            if isinstance(outcome[0], str):
                what, index = outcome
                kind[j] = _BAD
                name = self._name(index)
                self._reject(block, j, j, UNREADABLE_ROW, f"unreadable row: {what.format(name)}", name)
                continue
            last = outcome[0]
            kind[j + 1:last + 1] = _FURTHER
            span[j] = last
            self.multiline = self.multiline or last > j
        return kind[:used], span[:used], used

    def _name(self, index: int) -> str:
        return self.columns[index] if index < len(self.columns) else f"field {index + 1}"

    def _check_bytes(self, block: _Block, kind: np.ndarray, span: np.ndarray, first: int, used: int) -> None:
        """Reject rows holding a NUL byte; note whether the text is UTF-8, and
        the rows that would be no text in cp1252."""
        a = block.a[: int(block.terms[used - 1]) + 1] if used else block.a[:0]
        starts = np.where(kind == _START, np.arange(used), -1)
        # A further line of a row belongs to the row; other lines to none.
        owner = np.where(kind == _FURTHER, np.maximum.accumulate(starts), starts) if used else starts
        for j in _rows_with(block, owner, np.flatnonzero(a == _NUL), first):
            if kind[j] == _START:
                kind[j] = _BAD
                self._reject(block, j, int(span[j]), NUL_BYTE, "row holds a NUL byte (binary data, not text)", None)
        if not (a >= 0x80).any():
            return  # ASCII
        if self.utf8:
            begin = int(block.starts[first]) if first < used else len(a)  # after the header
            try:  # The lines are complete, so no character is cut in two.
                block.buf[begin:len(a)].decode(UTF8)
            except UnicodeDecodeError:
                self.utf8 = False
        undefined = np.flatnonzero(np.isin(a, CP1252_UNDEFINED))
        for j in _rows_with(block, owner, undefined, first):
            if kind[j] == _START:
                raw = block.buf[block.starts[j]:block.ends[int(span[j])]]
                listed = ", ".join(f"0x{b:02X}" for b in CP1252_UNDEFINED if b in raw)
                self.not_cp1252.append(self._bad_row(
                    block, j, int(span[j]), UNDECODABLE_ROW,
                    f"row holds bytes ({listed}) that are neither UTF-8 nor cp1252 text", None))

    def _account(self, block: _Block, kind: np.ndarray, span: np.ndarray, first: int, used: int) -> None:
        lines = np.arange(used) + self.line
        self.records += int(np.count_nonzero(kind == _START))
        self.skipped.append(lines[(kind != _START) & (kind != _HEADER)])
        for j in np.flatnonzero(kind == _BLANK_OMITTED).tolist():
            self.omit.append((self.offset + int(block.starts[j]), self.offset + int(block.terms[j]) + 1))

    def _bad_row(self, block: _Block, j: int, last: int, reason: str, message: str, column: str | None):
        start, stop = int(block.starts[j]), int(block.terms[last]) + 1
        text = block.buf[start:int(block.ends[last])].decode(UTF8, errors="replace")
        return BadRow(self.line + j, reason, column, message, text), (self.offset + start, self.offset + stop)

    def _reject(self, block: _Block, j: int, last: int, reason: str, message: str, column: str | None) -> None:
        self.bad.append(self._bad_row(block, j, last, reason, message, column))

    def finish(self, path: Path) -> LineScan:
        bad = list(self.bad)
        skipped = [*self.skipped]
        encoding = UTF8 if self.utf8 else CP1252
        if encoding == CP1252:
            known = {row.line for row, _ in bad}
            extra = [(row, where) for row, where in self.not_cp1252 if row.line not in known]
            bad += extra
            self.records -= len(extra)
            skipped += [np.array([row.line for row, _ in extra], dtype=np.int64)]
        bad.sort(key=lambda item: item[0].line)
        omit = sorted(self.omit + [where for _, where in bad])
        lines = np.sort(np.concatenate(skipped)) if skipped else np.zeros(0, dtype=np.int64)
        return LineScan(path, encoding, self.records, [row for row, _ in bad], lines.astype(np.int64),
                        omit, self.multiline)


# Line kinds.
_HEADER, _START, _BLANK, _BLANK_OMITTED, _FURTHER, _BAD = range(6)


def _split_lines(buf: bytes, at_end: bool) -> _Block:
    """The complete lines of ``buf``: ``\\n``, ``\\r\\n`` and a lone ``\\r`` end
    a line, as pyarrow reads them; at the end of the file, so does the end."""
    a = np.frombuffer(buf, dtype=np.uint8)
    terms = np.flatnonzero(a == _LF)
    ends = terms.copy()
    crs = np.flatnonzero(a == _CR)
    if len(crs):
        before_lf = crs + 1 < len(a)
        before_lf[before_lf] = a[crs[before_lf] + 1] == _LF
        ends[np.isin(terms, crs + 1)] -= 1
        lone = crs[~before_lf & ((crs + 1 < len(a)) | at_end)]
        order = np.argsort(np.concatenate([terms, lone]), kind="stable")
        terms = np.concatenate([terms, lone])[order]
        ends = np.concatenate([ends, lone])[order]
    last = int(terms[-1]) + 1 if len(terms) else 0
    if at_end and last < len(a):
        terms = np.append(terms, len(a))
        ends = np.append(ends, len(a))
    starts = np.concatenate([[0], terms[:-1] + 1]) if len(terms) else terms
    return _Block(buf, a, starts.astype(np.int64), ends.astype(np.int64), terms.astype(np.int64),
                  np.flatnonzero(a == _QUOTE), at_end)


def _irregular_quote_lines(block: _Block, first: int) -> np.ndarray:
    """Lines whose quotes do not simply pair up as ``,"...",`` around fields."""
    q = block.quotes
    if len(q) == 0 or block.lines == 0:
        return np.zeros(0, dtype=np.int64)
    q = q[q < block.terms[-1]]
    line = np.searchsorted(block.terms, q)
    rank = np.arange(len(q)) - np.searchsorted(line, line, side="left")
    a = block.a
    opening = rank % 2 == 0
    ok = np.where(
        opening,
        (q == block.starts[line]) | (a[np.maximum(q - 1, 0)] == _COMMA),
        (q + 1 == block.ends[line]) | (a[np.minimum(q + 1, len(a) - 1)] == _COMMA),
    )
    odd = np.flatnonzero(np.bincount(line, minlength=block.lines) % 2 == 1)
    irregular = np.union1d(np.unique(line[~ok]), odd)
    return irregular[irregular >= first]


def _rows_with(block: _Block, owner: np.ndarray, positions: np.ndarray, first: int) -> list[int]:
    """The rows (their first line) holding any of the byte positions."""
    if len(positions) == 0:
        return []
    lines = np.searchsorted(block.terms, positions)
    lines = lines[(lines < len(owner)) & (lines >= first)]
    rows = np.unique(owner[lines])
    return rows[rows >= 0].tolist()


def _follow_quotes(block: _Block, j: int, fields: int):
    """Follow the row starting at line ``j`` through its quotes, as pyarrow
    parses it. Returns ``(last line,)`` of a readable row, ``(what is wrong,
    field index)`` (``{}`` in the text stands for the field's name), or None
    when the row runs past the buffer."""
    buf, a, terms = block.buf, block.a, block.terms
    pos, index = int(block.starts[j]), 0
    while True:
        if pos < len(a) and a[pos] == _QUOTE:  # a quoted field
            q = _closing_quote(block, pos + 1)
            if q is None:
                return ("the quote opening {} is never closed", index) if block.at_end else None
            pos = q + 1
            if pos >= len(a) and not block.at_end:
                return None
            if pos < len(a) and a[pos] not in (_COMMA, _LF, _CR):
                on = int(np.searchsorted(terms, q))
                if on > j:
                    return ("the quote opening {} is not closed on its line", index)
                return (f"the quote closing {{}} is followed by {chr(a[pos])!r}, not by a comma", index)
        t = int(np.searchsorted(terms, pos))
        if t == len(terms):
            return None
        comma = buf.find(b",", pos, int(terms[t]))
        if comma < 0:
            if t > j and index + 1 != fields:
                return (f"the quote opening {{}} takes in {t - j} line break(s), leaving {index + 1} fields", index)
            return (t,)
        pos, index = comma + 1, index + 1


def _closing_quote(block: _Block, pos: int) -> int | None:
    """Position of the quote closing a quoted field whose text starts at ``pos``
    (a doubled quote stands for one quote), or None if the buffer has none."""
    quotes, a = block.quotes, block.a
    while True:
        k = int(np.searchsorted(quotes, pos))
        if k == len(quotes):
            return None
        q = int(quotes[k])
        if q + 1 < len(a) and a[q + 1] == _QUOTE:
            pos = q + 2
            continue
        return q


class _Omitting(io.RawIOBase):
    """A file's (decompressed) bytes without some byte ranges."""

    def __init__(self, path: Path, omit: list[tuple[int, int]]) -> None:
        self._stream = pa.input_stream(str(path), compression="detect")
        self._omit = list(omit)
        self._at = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        while self._omit and self._at >= self._omit[0][0]:
            start, stop = self._omit.pop(0)
            self._skip(stop - self._at)
        limit = len(view) if not self._omit else min(len(view), self._omit[0][0] - self._at)
        data = self._stream.read(limit)
        view[: len(data)] = data
        self._at += len(data)
        return len(data)

    def _skip(self, n: int) -> None:
        while n > 0:
            got = len(self._stream.read(min(n, 1 << 20)))
            if got == 0:
                return
            n -= got
            self._at += got

    def close(self) -> None:
        self._stream.close()
        super().close()
