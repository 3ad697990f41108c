"""People and the robot as articulated shapes (docs/dynamics.md, people's postures).

A person is a low-poly figure on a small skeleton: pelvis, chest, neck, head
(with hair, or a hood), upper arms, forearms, hands, thighs, shins and feet.
Limbs and trunk are tapered capsules, the head an ellipsoid; every piece is
a closed (watertight) mesh. The skeleton's proportions come from the
person's stature and shoulder width (:class:`Build`); what they do is a pose,
one per activity (:data:`POSES`): joint angles turned by forward kinematics,
never pieces placed by hand. So a person reads from their silhouette:
standing, walking in mid-stride, sitting on a sofa to watch television, bent
over a desk, cooking with a hand at the pan's handle, asleep on their back under a
blanket, collapsed face down on the floor with a knee bent and an arm flung up
by the head, holding a parcel, or, hood up, creeping in.

The figure stays inside the solids :func:`homeloop.sim.visibility.person_solids`
gives for the posture, so the geometric and the id-buffer backends see the
same person: the head pieces inside the head solid, everything inside the
body solid. A standing or sitting figure is placed with its head over the
middle of its footprint, a lying one with its head at the head end; a
standing one stands on the floor, a sitting one has its head at the top of
the sitting solid and its shins sloped so its feet reach the floor (or hang,
for a short person on a high seat), a lying one lies on ``base``. Where a
pose reaches out of the solids (a stride, an arm forward: the standing solid
is shallow), the figure is squeezed toward its head's centre on that side
just enough (:func:`fitted`).

Each piece carries a *role* that picks its colour
(:func:`homeloop.sim.render.materials.person_colours`: skin, hair, top,
forearms, hands, bottom, shins, shoes, and the props' hood, parcel and
blanket) and whether it belongs to the head (perception names a person whose
head it sees). Frames are the person's own: origin on the floor (or the
surface) under their centre, +x the way they face, z up.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

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


# --- shapes -------------------------------------------------------------------------------------------

#: Sides of a limb's cross-section, and rings in each of its end caps (low-poly, still round).
AROUND = 10
CAP_RINGS = 3


@dataclass(frozen=True)
class Shape:
    """A closed triangle mesh as plain arrays (a figure is posed and placed as these, and made
    into :class:`trimesh.Trimesh` pieces once, at the end)."""

    vertices: np.ndarray  # (V, 3)
    faces: np.ndarray  # (F, 3) int

    def mapped(self, move: Callable[[np.ndarray], np.ndarray]) -> "Shape":
        return Shape(move(self.vertices), self.faces)

    def mesh(self) -> trimesh.Trimesh:
        return trimesh.Trimesh(self.vertices, self.faces, process=False)


def capsule(a: np.ndarray, b: np.ndarray, ra: tuple[float, float], rb: tuple[float, float],
            caps: tuple[float, float] | None = None, across: np.ndarray | None = None) -> Shape:
    """A tapered capsule from point ``a`` to ``b``: elliptic cross-sections with radii (across,
    other) of ``ra`` at ``a`` and ``rb`` at ``b``, closed by half-ellipsoid caps ``caps`` deep
    (default: the smaller radius at each end). ``across`` (default +x) is the direction of each
    section's first radius, made square to the axis. Watertight, faces outward."""
    axis = b - a
    length = float(np.linalg.norm(axis))
    w = axis / length
    hint = np.array([1.0, 0.0, 0.0]) if across is None else np.asarray(across, dtype=float)
    u = hint - (hint @ w) * w
    if np.linalg.norm(u) < 1e-6:  # the hint runs along the axis: any square direction will do
        u = np.cross(w, [0.0, 1.0, 0.0] if abs(w[1]) < 0.9 else [1.0, 0.0, 0.0])
    u /= np.linalg.norm(u)
    v = np.cross(w, u)
    cap_a, cap_b = caps if caps is not None else (min(ra), min(rb))
    theta = 2 * math.pi * np.arange(AROUND) / AROUND
    lats = np.linspace(0.0, math.pi / 2, CAP_RINGS + 1)[1:]  # from the pole side toward the equator
    rings = [(ra, -cap_a * math.cos(t), math.sin(t)) for t in lats] + \
        [(rb, length + cap_b * math.cos(t), math.sin(t)) for t in lats[::-1]]
    local = [np.array([[0.0, 0.0, -cap_a]])]
    local += [np.column_stack([r[0] * k * np.cos(theta), r[1] * k * np.sin(theta), np.full(AROUND, z)])
              for r, z, k in rings]
    local.append(np.array([[0.0, 0.0, length + cap_b]]))
    points = np.vstack(local)
    vertices = a + points[:, :1] * u + points[:, 1:2] * v + points[:, 2:] * w
    return Shape(vertices, _capsule_faces(len(rings)))


@functools.cache
def _capsule_faces(n_rings: int) -> np.ndarray:
    """Faces of :func:`capsule`'s vertices: a fan at each pole, quads between rings, wound outward."""
    k = np.arange(AROUND)
    k1 = (k + 1) % AROUND
    top = 1 + n_rings * AROUND
    faces = [np.column_stack([np.zeros(AROUND, dtype=int), 1 + k1, 1 + k])]
    for r in range(n_rings - 1):
        lo, hi = 1 + r * AROUND, 1 + (r + 1) * AROUND
        faces += [np.column_stack([lo + k, lo + k1, hi + k1]), np.column_stack([lo + k, hi + k1, hi + k])]
    last = 1 + (n_rings - 1) * AROUND
    faces.append(np.column_stack([np.full(AROUND, top), last + k, last + k1]))
    out = np.vstack(faces).astype(np.int64)
    out.flags.writeable = False
    return out


def ellipsoid(centre: tuple[float, float, float], radii: tuple[float, float, float]) -> Shape:
    """An ellipsoid with semi-axes ``radii`` along x, y and z."""
    vertices, faces = _unit_sphere()
    return Shape(vertices * radii + centre, faces)


@functools.cache
def _unit_sphere() -> tuple[np.ndarray, np.ndarray]:
    """A unit icosphere's vertices and faces (twice subdivided: 320 faces), made once."""
    sphere: trimesh.Trimesh = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
    vertices, faces = np.array(sphere.vertices, dtype=float), np.array(sphere.faces, dtype=np.int64)
    vertices.flags.writeable = faces.flags.writeable = False
    return vertices, faces


# --- the skeleton ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Joint:
    """A joint of the skeleton: its parent (None for the pelvis), where it sits in the parent's
    frame at rest, which side it is on (+1 left and middle, -1 right: turns mirror), and whether
    what it carries points up (the trunk, neck and head) rather than hangs."""

    parent: str | None
    offset: tuple[float, float, float]
    side: float = 1.0
    upward: bool = False


@dataclass(frozen=True)
class Build:
    """A figure's proportions (m) from stature and shoulder width: heights of the joints standing,
    lengths of the limbs and their girths (standard anthropometric shares of the stature)."""

    stature: float
    shoulders: float

    @property
    def girth(self) -> float:
        """Limb and trunk thickness relative to a 0.45 m wide adult, kept within sane bounds."""
        return min(max(self.shoulders / 0.45, 0.7), 1.1)

    @property
    def shoulder_y(self) -> float:
        """How far out the shoulder joints are: the upper arms hang just inside the shoulder width."""
        return self.shoulders / 2 - self.upper_arm_r[0] - 0.018

    @property
    def upper_arm_r(self) -> tuple[float, float]:
        return 0.05 * self.girth, 0.042 * self.girth

    @property
    def hip_y(self) -> float:
        return 0.2 * self.shoulders

    def length(self, share: float) -> float:
        """A length given as a share of the stature (:data:`HIP` and the shares beside it)."""
        return share * self.stature

    def skeleton(self) -> dict[str, Joint]:
        """The joints, each after its parent, at rest: standing straight, arms down, facing +x."""
        h = self.stature
        hip, spine, shoulder = HIP * h, SPINE * h, SHOULDER * h
        head_joint = h - HAIR_TOP_M - HEAD_ABOVE_JOINT_M
        sy, hy = self.shoulder_y, self.hip_y
        joints = {"pelvis": Joint(None, (0.0, 0.0, hip)),
                  "spine": Joint("pelvis", (0.0, 0.0, spine - hip), upward=True),
                  "neck": Joint("spine", (0.0, 0.0, shoulder + 0.015 - spine), upward=True),
                  "head": Joint("neck", (0.0, 0.0, head_joint - shoulder - 0.015), upward=True)}
        for name, side in (("l", 1.0), ("r", -1.0)):
            joints |= {f"shoulder_{name}": Joint("spine", (0.0, side * sy, shoulder - spine), side),
                       f"elbow_{name}": Joint(f"shoulder_{name}", (0.0, 0.0, -UPPER_ARM * h), side),
                       f"wrist_{name}": Joint(f"elbow_{name}", (0.0, 0.0, -FOREARM * h), side),
                       f"hip_{name}": Joint("pelvis", (0.0, side * hy, 0.0), side),
                       # the shin slopes back a little: the ankle stands behind the hip
                       f"knee_{name}": Joint(f"hip_{name}", (0.0, 0.0, (KNEE - HIP) * h), side),
                       f"ankle_{name}": Joint(f"knee_{name}", (-0.025, 0.0, (ANKLE - KNEE) * h), side)}
        return joints


#: Heights of the joints standing and lengths of the arm's segments, as shares of the stature
#: (standard anthropometric proportions): hip, lumbar spine, shoulder, knee and ankle; upper arm,
#: forearm and hand; the foot's length, at most :data:`FOOT_M`.
HIP, SPINE, SHOULDER, KNEE, ANKLE = 0.51, 0.60, 0.815, 0.285, 0.045
UPPER_ARM, FOREARM, HAND, FOOT = 0.186, 0.146, 0.075, 0.13
FOOT_M = 0.205
#: The head: semi-axes of its ellipsoid (m), its centre above and ahead of the head joint (the top
#: of the neck), and the top of the hair above the head's centre; all of it fits the head solid
#: (:data:`homeloop.sim.visibility.HEAD_M` each way).
HEAD_RADII = (0.095, 0.076, 0.104)
HEAD_ABOVE_JOINT_M = 0.055
HEAD_AHEAD_M = 0.012
HAIR_TOP_M = 0.110


#: A piece before posing: the joint it moves with, its role, head or body, and its shape in the joint's frame.
Part = tuple[str, str, bool, Shape]

_Z = np.array([0.0, 0.0, 1.0])


def _pt(x: float, y: float, z: float) -> np.ndarray:
    return np.array([x, y, z])


def trunk_parts(b: Build) -> list[Part]:
    """Pelvis, chest, neck and head (hair or hood chosen later), each in its joint's frame."""
    g = b.girth
    skel = b.skeleton()
    spine_up, neck_up = skel["spine"].offset[2], skel["neck"].offset[2]
    hip_half = b.hip_y + 0.06 * g
    pelvis = capsule(_pt(0, 0, -0.03), _pt(0, 0, 0.07), (0.095 * g, hip_half), (0.09 * g, hip_half * 0.92),
                     caps=(0.05, 0.04))
    chest_half = b.shoulder_y - 0.012
    chest = capsule(_pt(0, 0, 0.07 - spine_up), _pt(0.005, 0, neck_up - 0.035), (0.085 * g, 0.13 * g),
                    (0.1 * g, chest_half), caps=(0.04, 0.045))
    neck_len = skel["head"].offset[2]
    neck = capsule(_pt(0, 0, -0.04), _pt(0.006, 0, neck_len + 0.02), (0.056 * g, 0.058 * g), (0.05 * g, 0.052 * g))
    centre = (HEAD_AHEAD_M, 0.0, HEAD_ABOVE_JOINT_M)
    head = ellipsoid(centre, HEAD_RADII)
    nose = capsule(_pt(HEAD_AHEAD_M + 0.08, 0, HEAD_ABOVE_JOINT_M - 0.005),
                   _pt(HEAD_AHEAD_M + 0.1, 0, HEAD_ABOVE_JOINT_M - 0.03), (0.014, 0.013), (0.012, 0.011))
    return [("pelvis", "bottom", False, pelvis), ("spine", "top", False, chest), ("neck", "skin", False, neck),
            ("head", "skin", True, head), ("head", "skin", True, nose)]


def hair_part() -> Part:
    """Hair over the top, back and sides of the head, leaving the face."""
    c = HEAD_AHEAD_M
    return ("head", "hair", True, ellipsoid((c - 0.014, 0.0, HEAD_ABOVE_JOINT_M + 0.01), (0.094, 0.082, 0.1)))


def hood_part() -> Part:
    """A hood up over the head, open at the face, down to the jaw."""
    c = HEAD_AHEAD_M
    return ("head", "hood", True, ellipsoid((c - 0.016, 0.0, HEAD_ABOVE_JOINT_M + 0.004), (0.099, 0.09, 0.106)))


def limb_parts(b: Build) -> list[Part]:
    """Arms, hands, legs and feet of both sides, each in its joint's frame."""
    g = b.girth
    foot, ankle = min(b.length(FOOT), FOOT_M), b.length(ANKLE)
    out: list[Part] = []
    for name in ("l", "r"):
        out += [(f"shoulder_{name}", "top", False,
                 capsule(_pt(0, 0, 0), _pt(0, 0, -b.length(UPPER_ARM)), b.upper_arm_r, (0.04 * g, 0.038 * g))),
                (f"elbow_{name}", "forearms", False,
                 capsule(_pt(0, 0, 0), _pt(0, 0, -b.length(FOREARM)), (0.038 * g, 0.037 * g),
                         (0.029 * g, 0.027 * g))),
                (f"wrist_{name}", "hands", False,  # a mitten, flat across the palm
                 capsule(_pt(0.004, 0, -0.01), _pt(0.008, 0, -b.length(HAND)), (0.032 * g, 0.016),
                         (0.03 * g, 0.013), caps=(0.016, 0.02))),
                (f"hip_{name}", "bottom", False,
                 capsule(_pt(0, 0, 0.02), _pt(0, 0, b.length(KNEE - HIP)), (0.084 * g, 0.082 * g),
                         (0.057 * g, 0.056 * g))),
                (f"knee_{name}", "shins", False,
                 capsule(_pt(0, 0, 0), _pt(0, 0, b.length(ANKLE - KNEE)), (0.056 * g, 0.055 * g),
                         (0.039 * g, 0.038 * g))),
                (f"ankle_{name}", "shoes", False,  # heel behind the ankle, sole on the floor, flat
                 capsule(_pt(-0.016, 0, 0.034 - ankle), _pt(foot - 0.088, 0, 0.03 - ankle),
                         (0.034, 0.036 * g), (0.026, 0.042 * g), caps=(0.034, 0.038), across=_Z))]
    return out


# --- poses ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """How a joint is turned (degrees). ``bend`` swings what hangs from it forward (knees bend with
    negative values, a foot's toes come up) and leans what stands on it (the trunk, neck and head)
    forward; ``out`` swings a limb away from the body's midline (leans the trunk to its right);
    ``twist`` turns it about its own length. A ``level`` turn is measured from the floor, not from
    the parent: a foot flat on the floor, a shin at a set slope."""

    bend: float = 0.0
    out: float = 0.0
    twist: float = 0.0
    level: bool = False


@dataclass(frozen=True)
class Pose:
    """A pose: the turn of each joint (a name without ``_l``/``_r`` turns both sides alike), how the
    figure lies (``supine`` on its back, ``prone`` face down, or upright), whether it sits (its
    shins then slope so its feet reach the floor), and its props (``parcel``, ``hood``, ``blanket``)."""

    turns: Mapping[str, Turn] = field(default_factory=dict)
    lie: str = ""
    seated: bool = False
    props: tuple[str, ...] = ()

    def turn(self, joint: str) -> Turn:
        return self.turns.get(joint) or self.turns.get(joint.removesuffix("_l").removesuffix("_r")) or Turn()


#: Short for :class:`Turn` in the pose table.
T = Turn

#: One pose per activity that draws a person (``away`` draws none); see the module docstring.
POSES: dict[str, Pose] = {
    "standing": Pose({"shoulder": T(0, 3), "elbow": T(8), "hip": T(0, 2), "ankle": T(level=True)}),
    "walking": Pose({"head": T(-2), "shoulder_l": T(-8, 3), "elbow_l": T(10), "shoulder_r": T(4, 3),
                     "elbow_r": T(12), "hip_l": T(3, 1), "knee_l": T(-2), "ankle_l": T(5, level=True),
                     "hip_r": T(12, 1), "knee_r": T(-32), "ankle_r": T(-30, level=True)}),
    "watching_tv": Pose({"pelvis": T(-10), "spine": T(28), "neck": T(7), "head": T(-10), "shoulder": T(14, 6),
                         "elbow": T(45, -22), "hip": T(86, 7), "ankle": T(level=True)}, seated=True),
    "desk_work": Pose({"spine": T(12), "neck": T(6), "head": T(20), "shoulder": T(30, 8), "elbow": T(74, -36),
                       "wrist": T(0, -8), "hip": T(88, 4), "ankle": T(level=True)}, seated=True),
    "cooking": Pose({"spine": T(3), "head": T(8), "shoulder_l": T(-12, 5), "elbow_l": T(84, -46),
                     "shoulder_r": T(-8, 5), "elbow_r": T(96, -46), "wrist": T(0, -10), "hip": T(0, 2),
                     "ankle": T(level=True)}),
    "sleeping": Pose({"head": T(12), "shoulder": T(0, 4), "elbow": T(10), "hip": T(0, 1), "ankle": T(-55)},
                     lie="supine", props=("blanket",)),
    "collapsed": Pose({"spine": T(0, 0, 6), "neck": T(0, 0, 30), "head": T(0, -6, 40), "shoulder_l": T(162),
                       "elbow_l": T(0, -110), "shoulder_r": T(-4, 2), "elbow_r": T(10, 0, -60), "hip_l": T(-4, 3),
                       "knee_l": T(-14), "ankle_l": T(-55), "hip_r": T(0, 2), "knee_r": T(-3), "ankle_r": T(-60)},
                      lie="prone"),
    "delivering": Pose({"pelvis": T(-4), "spine": T(-4), "neck": T(22), "head": T(-10), "shoulder": T(-16, 5),
                        "elbow": T(100, -40), "wrist": T(0, -20), "hip": T(-4, 2), "ankle": T(level=True)},
                       props=("parcel",)),
    "breaking_in": Pose({"pelvis": T(2), "spine": T(3), "neck": T(-2), "head": T(-4), "shoulder_l": T(-8, 5),
                         "elbow_l": T(30), "shoulder_r": T(2, 6), "elbow_r": T(136, -22), "hip": T(12, 5),
                         "knee": T(-19), "ankle": T(level=True)}, props=("hood",)),
}
#: Activities drawn in another's pose, and the pose of a posture whose activity has none.
SAME_POSE = {"leaving_home": "walking"}
POSTURE_POSES = {"standing": "standing", "sitting": "watching_tv", "lying": "collapsed"}


def pose_of(posture: str, activity: str) -> Pose:
    """The pose of an activity, or of the posture when the activity is not one of its own."""
    name = SAME_POSE.get(activity, activity)
    pose = POSES.get(name)
    if pose is None or _posture_of(pose) != posture:
        pose = POSES[POSTURE_POSES.get(posture, "standing")]
    return pose


def _posture_of(pose: Pose) -> str:
    return "lying" if pose.lie else "sitting" if pose.seated else "standing"


# --- forward kinematics ----------------------------------------------------------------------------------


def _rotation(turn: Turn, side: float, upward: bool) -> np.ndarray:
    """The rotation a turn makes (see :class:`Turn`): bend about y, out about x, twist about z."""
    bend = math.radians(turn.bend) * (-1.0 if upward else 1.0)
    out, twist = math.radians(turn.out) * side, math.radians(turn.twist) * side
    cb, sb, co, so, ct, st = math.cos(bend), math.sin(bend), math.cos(out), math.sin(out), math.cos(twist), \
        math.sin(twist)
    pitch = np.array([[cb, 0.0, -sb], [0.0, 1.0, 0.0], [sb, 0.0, cb]])  # swings -z toward +x
    roll = np.array([[1.0, 0.0, 0.0], [0.0, co, -so], [0.0, so, co]])  # swings -z toward +y
    spin = np.array([[ct, -st, 0.0], [st, ct, 0.0], [0.0, 0.0, 1.0]])
    rotation: np.ndarray = pitch @ roll @ spin
    return rotation


def joint_frames(skeleton: Mapping[str, Joint], pose: Pose,
                 overrides: Mapping[str, Turn] | None = None) -> dict[str, np.ndarray]:
    """Each joint's frame (4x4, in the figure's standing frame) for a pose: forward kinematics down
    the skeleton, a ``level`` turn taken from the floor under the pelvis's heading."""
    frames: dict[str, np.ndarray] = {}
    for name, joint in skeleton.items():
        turn = (overrides or {}).get(name) or pose.turn(name)
        rotation = _rotation(turn, joint.side, joint.upward or joint.parent is None)
        frame = np.eye(4)
        if joint.parent is None:
            frame[:3, :3], frame[:3, 3] = rotation, joint.offset
        else:
            parent = frames[joint.parent]
            frame[:3, 3] = parent[:3, :3] @ np.asarray(joint.offset) + parent[:3, 3]
            if turn.level:
                heading = math.atan2(frames["pelvis"][1, 0], frames["pelvis"][0, 0])
                c, s = math.cos(heading), math.sin(heading)
                frame[:3, :3] = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ rotation
            else:
                frame[:3, :3] = parent[:3, :3] @ rotation
        frames[name] = frame
    return frames


#: From the standing frame (head up, facing +x) to lying along +x, head first: on the back (the
#: face up, left and right swapped) or face down.
LIE = {"supine": np.array([[0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [1.0, 0.0, 0.0]]),
       "prone": np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])}
#: How far inside its solids a figure is placed (m), so rounding never pushes it out.
CLEARANCE_M = 0.002


@dataclass(frozen=True)
class Drawn:
    """A piece of a figure being posed: its role, head or body, and its shape."""

    role: str
    head: bool
    shape: Shape


@dataclass(frozen=True)
class Figure:
    """A posed figure: its pieces and its joints' positions, in one frame, and how much placing it
    squeezed it along x, y and z (1: not at all; see :func:`fitted`)."""

    pieces: list[Drawn]
    joints: dict[str, np.ndarray]
    squeeze: tuple[float, float, float] = (1.0, 1.0, 1.0)

    def mapped(self, move: Callable[[np.ndarray], np.ndarray],
               squeeze: tuple[float, float, float] | None = None) -> "Figure":
        """The figure with every vertex and joint moved by ``move`` (an (N, 3) map)."""
        return Figure([Drawn(p.role, p.head, p.shape.mapped(move)) for p in self.pieces],
                      {k: move(v[None, :])[0] for k, v in self.joints.items()}, squeeze or self.squeeze)

    def bounds(self, head: bool | None = None) -> np.ndarray:
        """(2, 3) lower and upper corners of the pieces (of the head's only, or the body's only)."""
        verts = np.vstack([p.shape.vertices for p in self.pieces if head is None or p.head == head])
        return np.array([verts.min(axis=0), verts.max(axis=0)])

    def with_piece(self, piece: Drawn) -> "Figure":
        return Figure([*self.pieces, piece], self.joints, self.squeeze)


def posed(b: Build, pose: Pose, overrides: Mapping[str, Turn] | None = None) -> Figure:
    """The figure of a pose in its standing frame (lying poses laid down), not yet placed."""
    frames = joint_frames(b.skeleton(), pose, overrides)
    lie = LIE.get(pose.lie, np.eye(3))
    parts = [*trunk_parts(b), *limb_parts(b), hood_part() if "hood" in pose.props else hair_part()]
    pieces = []
    for joint, role, head, shape in parts:
        m = frames[joint]
        pieces.append(Drawn(role, head, Shape((shape.vertices @ m[:3, :3].T + m[:3, 3]) @ lie.T, shape.faces)))
    return Figure(pieces, {k: lie @ m[:3, 3] for k, m in frames.items()})


def placed(b: Build, pose: Pose, base: float) -> Figure:
    """A pose's figure placed in its solids (see the module docstring), with its props."""
    figure = posed(b, pose)
    if pose.seated:
        figure = posed(b, pose, _sitting_shins(b, figure, _lift(b, pose, figure, base)[2]))
    lift = _lift(b, pose, figure, base)
    figure = fitted(figure.mapped(lambda v: v + lift), *solid_bounds(b, pose, base))
    figure = head_fitted(figure, *head_bounds(b, pose, base))
    if "parcel" in pose.props:
        figure = figure.with_piece(_parcel(b, figure))
    if "blanket" in pose.props:
        figure = figure.with_piece(_blanket(b, figure, base))
    return figure


def solid_bounds(b: Build, pose: Pose, base: float) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper corners of the body solid of a pose's posture, in the figure's frame
    (:func:`homeloop.sim.visibility.person_solids`), less :data:`CLEARANCE_M`."""
    h, s = b.stature, b.shoulders
    if pose.lie:
        lo, hi = np.array([-h / 2, -s / 2, base]), np.array([h / 2, s / 2, base + LYING_THICKNESS_M])
    else:
        share, depth = POSTURE_SOLIDS["sitting" if pose.seated else "standing"]
        lo, hi = np.array([-depth / 2, -s / 2, 0.0]), np.array([depth / 2, s / 2, share * h])
    return lo + CLEARANCE_M, hi - CLEARANCE_M


def head_bounds(b: Build, pose: Pose, base: float) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper corners of the head solid of a pose's posture, in the figure's frame
    (:func:`homeloop.sim.visibility.person_solids`), less :data:`CLEARANCE_M`."""
    half = HEAD_M / 2
    if pose.lie:
        lo, hi = np.array([b.stature / 2 - HEAD_M, -half, base]), np.array([b.stature / 2, half, base + HEAD_M])
    else:
        share = POSTURE_SOLIDS["sitting" if pose.seated else "standing"][0]
        lo, hi = np.array([-half, -half, share * b.stature - HEAD_M]), np.array([half, half, share * b.stature])
    return lo + CLEARANCE_M, hi - CLEARANCE_M


def head_fitted(figure: Figure, lo: np.ndarray, hi: np.ndarray) -> Figure:
    """The figure with its head pieces scaled about the head's centre, evenly, just enough to lie
    inside the box ``lo``-``hi`` (a tall person's face, lying, can rise a few millimetres above
    the head solid); the body is left as it is."""
    head = figure.bounds(head=True)
    centre = (head[0] + head[1]) / 2
    room = np.minimum(hi - centre, centre - lo)
    reach = np.maximum(head[1] - centre, centre - head[0])
    scale = float(min(1.0, np.min(room / np.maximum(reach, 1e-9))))
    if scale >= 1.0:
        return figure
    pieces = [Drawn(p.role, p.head, p.shape.mapped(lambda v: centre + (v - centre) * scale)) if p.head else p
              for p in figure.pieces]
    return Figure(pieces, figure.joints, figure.squeeze)


def fitted(figure: Figure, lo: np.ndarray, hi: np.ndarray) -> Figure:
    """The figure squeezed into the box ``lo``-``hi`` where it reaches out of it: on each side of
    its head's centre across (and of what it stands or lies on, upward), everything that side is
    scaled toward that point just enough. A pose drawn for the solids needs little or none; a
    stride or reach wider than the solid gets narrower rather than poking out of it (and out of
    the geometric backend's view of the person)."""
    head = figure.bounds(head=True)
    anchor = np.array([(head[0, 0] + head[1, 0]) / 2, (head[0, 1] + head[1, 1]) / 2, lo[2]])
    body = figure.bounds()
    below = np.where(body[0] < lo - 1e-9, (anchor - lo) / np.maximum(anchor - body[0], 1e-9), 1.0)
    above = np.where(body[1] > hi + 1e-9, (hi - anchor) / np.maximum(body[1] - anchor, 1e-9), 1.0)

    def squeeze(points: np.ndarray) -> np.ndarray:
        d = points - anchor
        squeezed: np.ndarray = anchor + np.where(d > 0, d * above, d * below)
        return squeezed

    least = np.minimum(below, above)
    return figure.mapped(squeeze, (float(least[0]), float(least[1]), float(least[2])))


def _lift(b: Build, pose: Pose, figure: Figure, base: float) -> np.ndarray:
    """How far to move a posed figure to place it: the head over the middle of the footprint (at the
    head end, lying), and standing on the floor, the head at the top of the sitting solid, or lying
    on ``base``."""
    head, body = figure.bounds(head=True), figure.bounds()
    centre = (head[0] + head[1]) / 2
    if pose.lie:
        return np.array([b.stature / 2 - CLEARANCE_M - head[1, 0], -centre[1], base + CLEARANCE_M - body[0, 2]])
    if pose.seated:
        top = POSTURE_SOLIDS["sitting"][0] * b.stature
        return np.array([-centre[0], -centre[1], top - CLEARANCE_M - body[1, 2]])
    return np.array([-centre[0], -centre[1], CLEARANCE_M - body[0, 2]])


def _sitting_shins(b: Build, figure: Figure, lift: float) -> dict[str, Turn]:
    """Shins sloped back from the knees so the feet rest flat on the floor (hanging straight down
    when the seat is too high for them)."""
    shin = b.length(KNEE - ANKLE)
    turns = {}
    for side in ("l", "r"):
        drop = figure.joints[f"knee_{side}"][2] + lift - b.length(ANKLE)
        slope = math.degrees(math.acos(min(max(drop / shin, -1.0), 1.0)))
        turns[f"knee_{side}"] = Turn(-slope, level=True)
    return turns


#: A parcel's width and height (m); its depth is what the standing solid leaves in front of the chest.
PARCEL_M = (0.34, 0.24)


def _parcel(b: Build, figure: Figure) -> Drawn:
    """A parcel held in both arms in front of the chest: as wide as the chest, resting on the
    forearms, from the chest to the front of the standing solid."""
    chest = next(p for p in figure.pieces if p.role == "top").shape.vertices
    bottom = float(min(figure.joints["wrist_l"][2], figure.joints["wrist_r"][2])) + 0.02
    top = bottom + PARCEL_M[1]
    band = chest[(chest[:, 2] >= bottom) & (chest[:, 2] <= top)]
    back = float(np.max((band if len(band) else chest)[:, 0])) + 0.006
    front = max(POSTURE_SOLIDS["standing"][1] / 2 - CLEARANCE_M, back + 0.02)
    half = min(PARCEL_M[0], 0.8 * b.shoulders) / 2
    box = box_mesh(back, -half, bottom, front, half, top)
    return Drawn("parcel", False, Shape(np.asarray(box.vertices, dtype=float), np.asarray(box.faces)))


def _blanket(b: Build, figure: Figure, base: float) -> Drawn:
    """A blanket over a figure lying on its back, from beyond the feet up to the shoulders: the hull
    of the body under it, raised a little, and its edges on what the figure lies on, tucked in
    along the sides of the lying solid."""
    cut = min(figure.joints["shoulder_l"][0], figure.joints["shoulder_r"][0]) + 0.03
    under = np.vstack([p.shape.vertices for p in figure.pieces if not p.head and p.role != "skin"])
    under = under[under[:, 0] <= cut]
    foot = float(under[:, 0].min()) - 0.04
    edges = np.array([(x, y, base) for x in (foot, cut) for y in (-b.shoulders / 2, b.shoulders / 2)])
    points = np.vstack([under + [0.0, 0.0, 0.025], under + [-0.04, 0.0, 0.0], edges])
    lo = [-b.stature / 2 + CLEARANCE_M, -b.shoulders / 2 + CLEARANCE_M, base + CLEARANCE_M]
    hi = [cut, b.shoulders / 2 - CLEARANCE_M, base + LYING_THICKNESS_M - CLEARANCE_M]
    hull: trimesh.Trimesh = trimesh.convex.convex_hull(np.clip(points, lo, hi))
    return Drawn("blanket", False, Shape(np.asarray(hull.vertices, dtype=float), np.asarray(hull.faces)))


def person_pieces(posture: str, activity: str, stature: float, shoulders: float,
                  base: float = 0.0, carrying: bool = True) -> list[Piece]:
    """The pieces of a person of ``stature`` and ``shoulders`` width (m) in a posture, posed for the
    activity (:func:`pose_of`); ``base`` is the height of what a lying person lies on. A pose that
    carries a parcel holds one only while the person is ``carrying`` something (a courier who has
    put the parcel down stands empty-handed)."""
    pose = pose_of(posture, activity)
    if "parcel" in pose.props and not carrying:
        pose = pose_of(posture, "")
    figure = placed(Build(stature, shoulders), pose, base if pose.lie else 0.0)
    return [Piece(p.role, p.shape.mesh(), p.head) for p in figure.pieces]


# --- the robot ------------------------------------------------------------------------------------------


def _both_sides(y: float, make: Callable[[float], Piece]) -> list[Piece]:
    return [make(y), make(-y)]


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
