"""People and the robot as simple articulated shapes (docs/dynamics.md, people's postures).

A person is a handful of boxes and an ellipsoid head, posed for what they
do: standing (arms at the sides), cooking (standing, forearms forward over
the worktop), sitting (thighs level, shins down, at a seat height that puts
the head where the geometric backend's sitting solid ends) and lying (along
their heading, head first, on the floor or on what they lie on). The
shapes stay inside the solids :func:`homeloop.sim.visibility.person_solids`
gives, so the geometric and the id-buffer backends see the same person.

Each piece carries a *role* — skin, hair, top, bottom, shoes — that picks
its colour (:func:`homeloop.sim.render.materials.person_colours`), and
whether it belongs to the head (perception names a person whose head it
sees). Frames are the person's own: origin on the floor (or the surface)
under their centre, +x the way they face, z up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import trimesh

from homeloop.sim.visibility import HEAD_M, LYING_THICKNESS_M, POSTURE_SOLIDS


@dataclass(frozen=True)
class Piece:
    """One shape of a figure: its mesh in the figure's frame, colour role, and head or body."""

    role: str
    mesh: trimesh.Trimesh
    head: bool = False


def box_mesh(x0: float, y0: float, z0: float, x1: float, y1: float, z1: float) -> trimesh.Trimesh:
    """An axis-aligned box from corner (x0, y0, z0) to corner (x1, y1, z1)."""
    box: trimesh.Trimesh = trimesh.creation.box(extents=(x1 - x0, y1 - y0, z1 - z0))
    box.apply_translation(((x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2))
    return box


def _head(cx: float, cz: float, length: float) -> trimesh.Trimesh:
    """An ellipsoid head ``length`` tall, centred at (cx, 0, cz)."""
    sphere: trimesh.Trimesh = trimesh.creation.icosphere(subdivisions=1, radius=1.0)
    # trimesh leaves apply_scale untyped
    sphere.apply_scale((0.42 * length, 0.36 * length, 0.5 * length))  # type: ignore[no-untyped-call]
    sphere.apply_translation((cx, 0.0, cz))
    return sphere


def _both_sides(y: float, make: Callable[[float], Piece]) -> list[Piece]:
    return [make(y), make(-y)]


def person_pieces(posture: str, activity: str, stature: float, shoulders: float,
                  base: float = 0.0) -> list[Piece]:
    """The pieces of a person of ``stature`` and ``shoulders`` width (m) in a posture; ``base`` is the
    height of what a lying person lies on."""
    if posture == "lying":
        return _lying(stature, shoulders, base)
    if posture == "sitting":
        return _sitting(stature, shoulders)
    return _standing(stature, shoulders, cooking=activity == "cooking")


def _standing(h: float, s: float, cooking: bool) -> list[Piece]:
    leg, arm = 0.12, 0.085
    hip, chest, neck = 0.48 * h, 0.81 * h, h - HEAD_M
    legs = _both_sides(0.22 * s, lambda y: Piece("bottom", box_mesh(-0.06, y - leg / 2, 0.06, 0.06, y + leg / 2, hip)))
    feet = _both_sides(0.22 * s, lambda y: Piece("shoes", box_mesh(-0.07, y - 0.05, 0.0, 0.14, y + 0.05, 0.06)))
    body = [Piece("bottom", box_mesh(-0.09, -0.4 * s, hip - 0.06, 0.09, 0.4 * s, hip + 0.04)),
            Piece("top", box_mesh(-0.1, -0.4 * s, hip + 0.04, 0.1, 0.4 * s, chest)),
            Piece("skin", box_mesh(-0.04, -0.04, chest, 0.04, 0.04, neck + 0.02)),
            Piece("skin", _head(0.0, neck + HEAD_M / 2, HEAD_M), head=True),
            Piece("hair", box_mesh(-0.1, -0.08, h - 0.05, 0.05, 0.08, h), head=True)]
    side = s / 2 - arm / 2
    if cooking:  # upper arms down to the elbow, forearms level toward the worktop
        elbow = 0.62 * h
        arms = [*_both_sides(side, lambda y: Piece("top", box_mesh(-arm / 2, y - arm / 2, elbow, arm / 2, y + arm / 2,
                                                                 chest))),
                *_both_sides(side, lambda y: Piece("top", box_mesh(0.0, y - arm / 2, elbow - arm, 0.28, y + arm / 2,
                                                                 elbow))),
                *_both_sides(side, lambda y: Piece("skin", box_mesh(0.28, y - 0.04, elbow - arm, 0.36, y + 0.04,
                                                                  elbow)))]
    else:
        wrist = 0.46 * h
        arms = [*_both_sides(side, lambda y: Piece("top", box_mesh(-arm / 2, y - arm / 2, wrist, arm / 2, y + arm / 2,
                                                                 chest))),
                *_both_sides(side, lambda y: Piece("skin", box_mesh(-0.04, y - 0.035, wrist - 0.08, 0.04, y + 0.035,
                                                                  wrist)))]
    return [*feet, *legs, *body, *arms]


def _sitting(h: float, s: float) -> list[Piece]:
    share, depth = POSTURE_SOLIDS["sitting"]
    top = share * h
    seat = 0.26 * h
    neck = top - HEAD_M
    back, knee = -depth / 2 + 0.03, depth / 2 - 0.1  # hips at the back, knees at the front
    leg, arm = 0.12, 0.085
    thighs = _both_sides(0.22 * s, lambda y: Piece("bottom", box_mesh(back, y - leg / 2, seat - 0.13, knee,
                                                                   y + leg / 2, seat)))
    shins = _both_sides(0.22 * s, lambda y: Piece("bottom", box_mesh(knee - leg, y - leg / 2, 0.06, knee, y + leg / 2,
                                                                  seat - 0.13)))
    feet = _both_sides(0.22 * s, lambda y: Piece("shoes", box_mesh(knee - leg, y - 0.05, 0.0, knee + 0.08, y + 0.05,
                                                                0.06)))
    torso_x = back + 0.02
    body = [Piece("top", box_mesh(torso_x, -0.4 * s, seat, torso_x + 0.2, 0.4 * s, neck - 0.04)),
            Piece("skin", box_mesh(torso_x + 0.06, -0.04, neck - 0.04, torso_x + 0.14, 0.04, neck + 0.02)),
            Piece("skin", _head(torso_x + 0.1, neck + HEAD_M / 2, HEAD_M), head=True),
            Piece("hair", box_mesh(torso_x, -0.08, top - 0.05, torso_x + 0.15, 0.08, top), head=True)]
    side = s / 2 - arm / 2
    arms = [*_both_sides(side, lambda y: Piece("top", box_mesh(torso_x + 0.05, y - arm / 2, seat + 0.05,
                                                             torso_x + 0.05 + arm, y + arm / 2, neck - 0.06))),
            *_both_sides(side, lambda y: Piece("skin", box_mesh(torso_x + 0.05, y - 0.035, seat, torso_x + 0.25,
                                                              y + 0.035, seat + 0.05)))]
    return [*feet, *shins, *thighs, *body, *arms]


def _lying(h: float, s: float, base: float) -> list[Piece]:
    """Lying along +x on a surface at ``base``: the head at the +x end (as the geometric head solid)."""
    thick = LYING_THICKNESS_M * 0.8
    z0, z1 = base, base + thick
    head_end = h / 2
    neck = head_end - HEAD_M
    chest = neck - 0.33 * h
    foot = -h / 2 + 0.07
    leg = 0.12
    legs = _both_sides(0.22 * s, lambda y: Piece("bottom", box_mesh(foot, y - leg / 2, z0, chest, y + leg / 2,
                                                                 z0 + 0.14)))
    feet = _both_sides(0.22 * s, lambda y: Piece("shoes", box_mesh(-h / 2, y - 0.05, z0, foot, y + 0.05, z0 + 0.2)))
    body = [Piece("top", box_mesh(chest, -0.4 * s, z0, neck - 0.03, 0.4 * s, z1 - 0.02)),
            Piece("skin", box_mesh(neck - 0.04, -0.04, z0 + 0.05, neck + 0.02, 0.04, z0 + 0.13)),
            Piece("skin", _lying_head(neck + HEAD_M / 2, z0), head=True)]
    side = s / 2 - 0.04
    arms = _both_sides(side, lambda y: Piece("top", box_mesh(chest - 0.05, y - 0.04, z0, neck - 0.05, y + 0.04,
                                                          z0 + 0.09)))
    return [*feet, *legs, *body, *arms]


def _lying_head(cx: float, z0: float) -> trimesh.Trimesh:
    head: trimesh.Trimesh = trimesh.creation.icosphere(subdivisions=1, radius=1.0)
    head.apply_scale((0.5 * HEAD_M, 0.42 * HEAD_M, 0.4 * HEAD_M))  # type: ignore[no-untyped-call]  # trimesh: untyped
    head.apply_translation((cx, 0.0, z0 + 0.4 * HEAD_M))
    return head


def robot_pieces(form: str, width: float, length: float, height: float) -> list[Piece]:
    """A robot body ``height`` tall (m): a humanoid on two legs with arms, or a base (wheels, four
    legs) carrying a torso; a head on top. Its own head camera never sees these (the camera sits
    inside the head)."""
    head = min(0.2, 0.15 * height)
    shoulder = height - head - 0.03
    if form == "humanoid":
        hip, leg = 0.47 * height, 0.1
        torso_w = width * 0.6
        arm_y = torso_w / 2 + 0.05
        pieces = [*_both_sides(torso_w / 4, lambda y: Piece("robot", box_mesh(-leg / 2, y - leg / 2, 0.0, leg / 2,
                                                                            y + leg / 2, hip))),
                  Piece("robot", box_mesh(-0.1, -torso_w / 2, hip, 0.1, torso_w / 2, shoulder)),
                  *_both_sides(arm_y, lambda y: Piece("robot", box_mesh(-0.04, y - 0.04, hip - 0.05, 0.04, y + 0.04,
                                                                      shoulder)))]
    else:
        deck = 0.35 * height
        pieces = [Piece("robot", box_mesh(-length / 2, -width / 2, 0.0, length / 2, width / 2, deck)),
                  Piece("robot", box_mesh(-0.12, -0.15, deck, 0.12, 0.15, shoulder))]
    pieces.append(Piece("robot_head", box_mesh(-0.09, -0.09, height - head, 0.09, 0.09, height), head=True))
    return pieces


def merged(pieces: list[Piece]) -> tuple[np.ndarray, np.ndarray, list[tuple[str, bool, int]]]:
    """The pieces as one vertex and face array, with (role, head, face count) per piece."""
    verts, faces, spans, offset = [], [], [], 0
    for p in pieces:
        verts.append(np.asarray(p.mesh.vertices, dtype=float))
        faces.append(np.asarray(p.mesh.faces, dtype=np.int64) + offset)
        spans.append((p.role, p.head, len(p.mesh.faces)))
        offset += len(p.mesh.vertices)
    return np.vstack(verts), np.vstack(faces), spans
