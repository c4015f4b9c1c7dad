"""The arrays of an ``.npz`` written and read without the copies ``np.savez`` / ``np.load`` make.

An ``.npz`` is a zip of ``.npy`` members. ``np.savez`` writes each array as
``array.tobytes()`` pieces (a copy) and ``np.load`` reads a member in 256 KiB
``bytes`` pieces that it copies again into the array. Here a member's data is
written from the array's own memory, narrowed in pieces that stay in cache
when the file keeps a smaller integer type, and a stored (uncompressed)
member is read with ``readinto`` straight into the array it becomes. The CRC
of every member is computed on write and checked on read, as zipfile does (for
large members by the kernel layer's ``crc32`` row: zlib 1.2's runs at 1-5 GB/s,
slower than the copies); the files are ordinary ``.npz`` files (``np.load``,
zipfile, ``unzip``, scipy and pydata read them). Compressed archives, and those
of 4 GiB or more (zip64 records), are written by zipfile.
"""
from __future__ import annotations

import contextlib
import io
import struct
import time
import tokenize
import typing
import zipfile
import zlib

import numpy as np

from .._kernels import scratch
from .._kernels.backend import backend_for, read_only

PIECE_BYTES = 1 << 18
"""Bytes per piece of a write or a read (256 KiB: the piece stays in cache between its conversion,
its CRC and its copy; np.load reads in pieces of the same size)."""

FOLDED_CRC_FROM = 1 << 22
"""Bytes of a member from which its CRC is the kernel layer's (folded: several times zlib's speed,
but compiled at its first use, about a second once per machine); smaller members take zlib's."""

# the zip records (zipfile's structFileHeader, structCentralDir, structEndArchive)
_LOCAL_HEADER, _LOCAL_SIGNATURE = struct.Struct("<4s2B4HL2L2H"), b"PK\003\004"
_CENTRAL, _CENTRAL_SIGNATURE = struct.Struct("<4s4B4HL2L5H2L"), b"PK\001\002"
_END, _END_SIGNATURE = struct.Struct("<4s4H2LH"), b"PK\005\006"
_ZIP32_LIMIT = (1 << 32) - 1  # sizes and offsets past it need zip64 records (left to zipfile)


def _header_bytes(shape, dtype):
    """The ``.npy`` header of a C-ordered array of ``shape`` and ``dtype`` (version 1.0 when it fits)."""
    d = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": tuple(shape)}
    buf = io.BytesIO()
    try:
        np.lib.format.write_array_header_1_0(buf, d)
    except ValueError:  # a header past 64 KiB (never for this module's arrays, but keep it right)
        buf = io.BytesIO()
        np.lib.format.write_array_header_2_0(buf, d)
    return buf.getvalue()


def write_npz(file, members, compressed):
    """Write ``members`` ((name, array, file dtype or None) each; ``.npy`` added to the names) as
    an ``.npz`` to ``file`` (a name or a writable file-like).

    ``file dtype``: the integer type the file keeps (the values must fit it; the caller checked),
    narrowed a piece at a time, never as a whole copy. Uncompressed archives under 4 GiB are
    written here (the CRC by folding); compressed or larger ones through zipfile.
    """
    members = [_prepared(name, array, dtype) for name, array, dtype in members]
    # each member's local header offset and alignment padding; ``directory_at``: where the members end
    starts, extras, directory_at = [], [], 0
    for name, head, a, dt in members:
        starts.append(directory_at)
        extras.append(_align_extra(directory_at + _LOCAL_HEADER.size + len(name)))
        directory_at += _LOCAL_HEADER.size + len(name) + len(extras[-1]) + len(head) + _nbytes(a, dt)
    total = directory_at + sum(_CENTRAL.size + len(name) for name, _, _, _ in members) + _END.size
    if compressed or total >= _ZIP32_LIMIT:
        how = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
        with zipfile.ZipFile(file, mode="w", compression=how, allowZip64=True) as zf:
            for name, head, a, dt in members:
                with zf.open(name.decode("ascii"), "w", force_zip64=True) as f:
                    f.write(head)
                    for piece in _pieces(a, dt):
                        f.write(piece)
        return
    t = time.localtime()
    dostime = t.tm_hour << 11 | t.tm_min << 5 | t.tm_sec // 2
    dosdate = (t.tm_year - 1980) << 9 | t.tm_mon << 5 | t.tm_mday
    own = not hasattr(file, "write")
    f = open(file, "wb") if own else file
    try:
        seekable = bool(getattr(f, "seekable", lambda: False)())
        if isinstance(f, io.BytesIO):
            _reserve(f, total)
        central = []
        for (name, head, a, dt), extra, pos in zip(members, extras, starts):
            size = len(head) + _nbytes(a, dt)
            crc32 = _crc_for(size)

            def local(crc):
                return _LOCAL_HEADER.pack(_LOCAL_SIGNATURE, 20, 0, 0, zipfile.ZIP_STORED, dostime, dosdate, crc,
                                          size, size, len(name), len(extra)) + name + extra

            crc = crc32(head)
            if seekable:  # the CRC of each piece as it is written, then into the header
                at = f.tell()
                f.write(local(0))
                f.write(head)
                for piece in _pieces(a, dt):
                    crc = crc32(piece, crc)
                    f.write(piece)
                end = f.tell()
                f.seek(at)
                f.write(local(crc))
                f.seek(end)
            else:  # the CRC goes in the header, before the data: two passes
                for piece in _pieces(a, dt):
                    crc = crc32(piece, crc)
                f.write(local(crc))
                f.write(head)
                for piece in _pieces(a, dt):
                    f.write(piece)
            central.append(_CENTRAL.pack(_CENTRAL_SIGNATURE, 20, 3, 20, 0, 0, zipfile.ZIP_STORED, dostime, dosdate,
                                         crc, size, size, len(name), 0, 0, 0, 0, 0o600 << 16, pos) + name)
        directory = b"".join(central)
        f.write(directory)
        f.write(_END.pack(_END_SIGNATURE, 0, 0, len(central), len(central), len(directory), directory_at, 0))
    finally:
        if own:
            f.close()


ALIGN = 64
"""Where each member's data starts in an uncompressed archive written here: on a multiple of 64
bytes from the archive's start (the ``.npy`` header is itself a multiple of 64), so a reader can
take the arrays where they lie in memory (:func:`in_place`) with every item aligned."""

_ALIGN_ID = 0xD935  # the extra field Android's zipalign pads with: (alignment, zeros), skipped by readers
_ALIGN_EXTRA = struct.Struct("<2HH")


def _align_extra(offset):
    """The local header's extra field that makes the member's data, which follows it at ``offset``
    without it, start on a multiple of :data:`ALIGN`. Only the local header has it (as zipalign
    does): the central directory records no extra field."""
    pad = -(offset + _ALIGN_EXTRA.size) % ALIGN
    return _ALIGN_EXTRA.pack(_ALIGN_ID, 2 + pad, ALIGN) + bytes(pad)


def _reserve(f, nbytes):
    """Grow the ``io.BytesIO`` ``f`` once to hold ``nbytes`` more from its position.

    A BytesIO grows by an eighth on each write past its end; where the allocator keeps buffers of
    this size in its heap (after a large block was freed, glibc raises its mmap threshold up to
    32 MiB), each growth is a copy of everything written so far, several times the file's bytes for
    one archive written 256 KiB at a time. One write of its last byte sizes it at once (zeroed
    pages that the pieces then overwrite)."""
    at = f.tell()
    end = f.seek(0, io.SEEK_END)
    if at + nbytes > end:
        f.seek(at + nbytes - 1)
        f.write(b"\0")
    f.seek(at)


def _prepared(name, array, dtype):
    array = np.asarray(array)
    if not array.flags.c_contiguous:
        array = array.copy(order="C")  # np.ascontiguousarray would make a 0-d array 1-d
    dtype = array.dtype if dtype is None else np.dtype(dtype)
    return (name + ".npy").encode("ascii"), _header_bytes(array.shape, dtype), array, dtype


def _nbytes(array, dtype):
    return array.size * dtype.itemsize


def _pieces(array, dtype):
    """The data of ``array`` as the file keeps it (``dtype``), in pieces of about PIECE_BYTES; a
    narrowed piece is a reused buffer, valid until the next one."""
    flat = array.reshape(-1)
    if dtype == array.dtype:
        raw = _bytes_of(flat)
        for lo in range(0, raw.shape[0], PIECE_BYTES):
            yield raw[lo:lo + PIECE_BYTES]
        return
    step = PIECE_BYTES // dtype.itemsize
    buf = np.empty(min(step, flat.shape[0]), dtype=dtype)
    for lo in range(0, flat.shape[0], step):
        piece = buf[:min(step, flat.shape[0] - lo)]
        piece[...] = flat[lo:lo + piece.shape[0]]
        yield _bytes_of(piece)


def _bytes_of(a):
    """The bytes of a C-contiguous array as a uint8 array (a view; every writer and reader takes it
    as a buffer, and the CRC row takes it as an array)."""
    return a.reshape(-1).view(np.uint8)


class Member(typing.NamedTuple):
    """A stored member's array: where its data starts in ``file``, what the ``.npy`` header says,
    the CRC of the bytes before the data, and zipfile's record."""

    file: typing.Any
    data: int
    shape: tuple
    dtype: np.dtype
    header_crc: int
    info: zipfile.ZipInfo


def stored_member(zf, name):
    """The :class:`Member` ``name`` (``.npy`` added) of the open ``ZipFile`` ``zf`` when it is
    stored uncompressed, C-ordered, of a plain dtype, in a file that can seek and ``readinto``;
    else None (the caller reads it the usual way)."""
    fp = getattr(zf, "fp", None)
    if fp is None or not all(hasattr(fp, a) for a in ("seek", "tell", "readinto")):
        return None
    try:
        info = zf.getinfo(name + ".npy")
    except KeyError:
        return None
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:  # compressed or encrypted
        return None
    fp.seek(info.header_offset)
    head = fp.read(_LOCAL_HEADER.size)
    if len(head) != _LOCAL_HEADER.size:
        return None
    fields = _LOCAL_HEADER.unpack(head)
    if fields[0] != _LOCAL_SIGNATURE:
        raise zipfile.BadZipFile(f"Bad magic number for file header of member {info.filename!r}")
    start = info.header_offset + _LOCAL_HEADER.size + fields[10] + fields[11]
    fp.seek(start)
    version = np.lib.format.read_magic(fp)
    try:
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fp)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fp)
        else:
            return None
    except tokenize.TokenError:  # (NumPy's header filter lets the tokenizer's error of a cut header through)
        raise ValueError(f"member {info.filename!r} has a malformed .npy header") from None
    if fortran or dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        return None
    data = fp.tell()
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if data - start + size != info.file_size:
        raise zipfile.BadZipFile(f"member {info.filename!r} holds {info.file_size - (data - start)} bytes of "
                                 f"data where its header says {size}")
    fp.seek(start)
    crc = zlib.crc32(fp.read(data - start))
    return Member(fp, data, tuple(shape), dtype, crc, info)


def read_stored(member, out=None, check=True):
    """The array of a :func:`stored_member`, read into ``out`` (of its shape and dtype) when
    given, its CRC checked (``check=False``: by the caller, with :func:`check_crc`)."""
    crc32 = _crc_for(member.info.file_size) if check else None
    if out is None:
        out = np.empty(member.shape, dtype=member.dtype)
    raw = _bytes_of(out)
    crc = member.header_crc
    member.file.seek(member.data)
    for lo in range(0, raw.shape[0], PIECE_BYTES):  # the CRC reads each piece while it is in cache
        _read_into(member.file, raw[lo:lo + PIECE_BYTES], member.info)
        if check:
            crc = crc32(raw[lo:lo + PIECE_BYTES], crc)
    if check:
        _compare_crc(crc, member)
    return out


def check_crc(member, array):
    """BadZipFile unless ``array`` (read with ``check=False``) has the member's CRC."""
    _compare_crc(_crc_for(member.info.file_size)(_bytes_of(array), member.header_crc), member)


def _compare_crc(crc, member):
    if crc != member.info.CRC:
        raise zipfile.BadZipFile(f"Bad CRC-32 for file {member.info.filename!r}")


@contextlib.contextmanager
def borrowed(member, check=True):
    """The array of a :func:`stored_member` for the ``with`` block only, read-only; ``check`` as
    :func:`read_stored`.

    In an ``io.BytesIO`` it is a view of the member's bytes where they lie (:func:`in_place`);
    elsewhere it is read into scratch memory given back at the end.
    """
    view = in_place(member)
    if view is not None:
        if check:
            check_crc(member, view)
        yield view
        return
    out = scratch.take(member.shape, member.dtype)
    try:
        yield read_only(read_stored(member, out=out, check=check))
    finally:
        scratch.give(out)


def in_place(member):
    """A read-only view of a :func:`stored_member`'s data where it lies in the file's memory: for an
    ``io.BytesIO`` whose data sits aligned for its dtype, else None.

    ``getvalue()`` hands over the ``bytes`` the BytesIO holds without a copy (one it was made from
    included; ``getbuffer()`` would copy those). The view keeps them alive: a later write to the
    BytesIO copies its buffer first, so the view never changes. (While a ``getbuffer()`` view of the
    BytesIO is held, ``getvalue()`` copies the whole file: correct, and the caller's choice.)
    """
    if type(member.file) is not io.BytesIO:
        return None
    count = int(np.prod(member.shape, dtype=np.int64))
    buf = member.file.getvalue()
    if member.data + count * member.dtype.itemsize > len(buf) or not member.dtype.isnative:
        return None
    view = np.frombuffer(buf, dtype=member.dtype, count=count, offset=member.data).reshape(member.shape)
    return view if view.flags.aligned else None


def _crc_for(nbytes):
    return backend_for().crc32 if nbytes >= FOLDED_CRC_FROM else zlib.crc32


def _read_into(fp, view, info):
    got = 0
    while got < view.shape[0]:
        n = fp.readinto(view[got:])
        if not n:
            raise zipfile.BadZipFile(f"member {info.filename!r} ends early: {got} of {view.shape[0]} bytes")
        got += n
