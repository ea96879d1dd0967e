#!/usr/bin/env python3
"""Repacks a generation kept as PGN (`NAME.pgn.zst`, as generations were kept before packed
games) into packed games: data/selfplay/NAME.dcpg.zst, its manifest updated (see
data/README.md).

    python3 data/pack_generation.py NAME [--pgn ARCHIVE] [--deepchess BIN]

ARCHIVE (default data/selfplay/NAME.pgn.zst) must be the archive the manifest names (its
sha256): a generation dropped earlier comes back from history with
`git show COMMIT:data/selfplay/NAME.pgn.zst > ARCHIVE`. `deepchess pack` refuses PGN that
would not unpack byte for byte. The manifest then names the packed file, the bytes and
sha256 of the PGN text it unpacks to, and the archive it was packed from. The PGN archive
is left where it is: `git rm` it.
"""

import argparse
import json
import os
import subprocess
import tempfile

import add_generation as generation


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="generation name, e.g. g10c-s310")
    parser.add_argument("--pgn", help="its PGN archive (default: data/selfplay/NAME.pgn.zst)")
    parser.add_argument("--deepchess", default=generation.DEFAULT_DEEPCHESS, help="the deepchess binary that packs")
    args = parser.parse_args()
    manifest_path = os.path.join(generation.SELFPLAY, f"{args.name}.json")
    if not os.path.isfile(manifest_path):
        generation.fail(f"{manifest_path}: no such generation")
    with open(manifest_path) as f:
        manifest = json.load(f)
    if manifest["file"].endswith(".dcpg.zst"):
        generation.fail(f"{args.name} is packed already ({manifest['file']})")
    archive = args.pgn or os.path.join(generation.SELFPLAY, manifest["file"])
    if not os.path.isfile(archive):
        generation.fail(f"{archive}: missing (a dropped generation comes back with git show, see --help)")
    if generation.sha256(archive) != manifest["sha256"]:
        generation.fail(f"{archive} is not the archive {manifest_path} names (sha256 differs)")
    packed = os.path.join(generation.SELFPLAY, f"{args.name}.dcpg.zst")
    if os.path.exists(packed):
        generation.fail(f"{packed} exists")
    with tempfile.TemporaryDirectory() as tmp:
        text = os.path.join(tmp, "games.pgn")
        with open(text, "wb") as out:
            subprocess.run(["zstd", "-dc", "--long=27", archive], stdout=out, check=True)
        generation.pack(args.deepchess, text, packed, False)
        digest = generation.text_digest(text)
    size = os.path.getsize(packed)
    was = {key: manifest[key] for key in ("file", "format", "bytes", "sha256")}
    updated = {}
    for key, value in manifest.items():
        updated[key] = value
        if key == "bytes_per_position":
            updated["pgn_text"] = digest
            updated["packed_from"] = was
    updated.update(
        file=os.path.basename(packed),
        format=generation.PACKED_FORMAT,
        bytes=size,
        sha256=generation.sha256(packed),
        bytes_per_position=round(size / max(manifest["positions"], 1), 3),
    )
    generation.write_manifest(manifest_path, updated)
    print(f"{packed}: {size} bytes ({updated['bytes_per_position']} bytes/position, {was['bytes']} as PGN)")


if __name__ == "__main__":
    main()
