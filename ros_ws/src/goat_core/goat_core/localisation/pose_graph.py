"""A small SE(2) pose graph: nodes are frame poses (x, y, yaw), edges relative poses measured between two of them
with an information matrix; Gauss-Newton on the sparse normal equations places the nodes by their evidence.

The error of an edge i -> j with measurement z is the measurement's inverse composed with the relative pose the
nodes give, in z's frame: ``e = [Rz^T (Ri^T (tj - ti) - tz), wrap(yj - yi - yz)]``; its cost ``e^T info e``.
Pure numpy/scipy.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.linalg import spsolve

__all__ = ["PoseGraph"]


def _wrap(a: np.ndarray) -> np.ndarray:
    return np.asarray((a + np.pi) % (2.0 * np.pi) - np.pi)


class PoseGraph:
    """Edges between node indices; the node values are passed to :meth:`optimise` (the owner keeps them)."""

    def __init__(self) -> None:
        self._i: list[int] = []
        self._j: list[int] = []
        self._z: list[np.ndarray] = []
        self._info: list[np.ndarray] = []

    def __len__(self) -> int:
        return len(self._i)

    def add_edge(self, i: int, j: int, z: tuple[float, float, float], info: np.ndarray) -> None:
        """An edge: node j measured at ``z`` (x, y, yaw) in node i's frame, with the 3x3 information ``info``."""
        self._i.append(i)
        self._j.append(j)
        self._z.append(np.asarray(z, dtype=float))
        self._info.append(np.asarray(info, dtype=float))

    def set_measurement(self, k: int, z: tuple[float, float, float]) -> None:
        self._z[k] = np.asarray(z, dtype=float)

    def cost(self, poses: np.ndarray) -> float:
        e, _, _ = self._errors(poses)
        return float(np.einsum("ei,eij,ej->", e, np.stack(self._info), e)) if len(self) else 0.0

    def _errors(self, poses: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-edge errors (E, 3) and their Jacobians with respect to node i and node j (E, 3, 3)."""
        i, j = np.asarray(self._i), np.asarray(self._j)
        z = np.stack(self._z)
        pi, pj = poses[i], poses[j]
        ci, si = np.cos(pi[:, 2]), np.sin(pi[:, 2])
        cz, sz = np.cos(z[:, 2]), np.sin(z[:, 2])
        d = pj[:, :2] - pi[:, :2]
        # Ri^T d and its derivative in yi
        lx, ly = ci * d[:, 0] + si * d[:, 1], -si * d[:, 0] + ci * d[:, 1]
        dlx, dly = -si * d[:, 0] + ci * d[:, 1], -ci * d[:, 0] - si * d[:, 1]
        ux, uy = lx - z[:, 0], ly - z[:, 1]
        e = np.column_stack([cz * ux + sz * uy, -sz * ux + cz * uy, _wrap(pj[:, 2] - pi[:, 2] - z[:, 2])])
        # Rz^T Ri^T as a 2x2: [[cz ci + sz (-si)... ]] written out: rows of Rz^T applied to rows of Ri^T
        m00, m01 = cz * ci - sz * si, cz * si + sz * ci
        m10, m11 = -sz * ci - cz * si, -sz * si + cz * ci
        n = len(i)
        a = np.zeros((n, 3, 3))
        b = np.zeros((n, 3, 3))
        a[:, 0, 0], a[:, 0, 1], a[:, 1, 0], a[:, 1, 1] = -m00, -m01, -m10, -m11
        a[:, 0, 2] = cz * dlx + sz * dly
        a[:, 1, 2] = -sz * dlx + cz * dly
        a[:, 2, 2] = -1.0
        b[:, 0, 0], b[:, 0, 1], b[:, 1, 0], b[:, 1, 1] = m00, m01, m10, m11
        b[:, 2, 2] = 1.0
        return e, a, b

    def optimise(self, poses: np.ndarray, fixed: int = 0, iterations: int = 5,
                 tolerance: float = 1e-6) -> np.ndarray:
        """The (N, 3) node poses after Gauss-Newton from ``poses``; node ``fixed`` stays where it is."""
        x = np.array(poses, dtype=float)
        if not len(self):
            return x
        n_nodes = x.shape[0]
        i, j = np.asarray(self._i), np.asarray(self._j)
        info = np.stack(self._info)
        # the index blocks of each edge's four 3x3 contributions to H
        rows3 = np.arange(3)
        for _ in range(iterations):
            e, a, b = self._errors(x)
            ia, ib = np.einsum("eij,ejk->eik", info, a), np.einsum("eij,ejk->eik", info, b)
            haa = np.einsum("eji,ejk->eik", a, ia)
            hab = np.einsum("eji,ejk->eik", a, ib)
            hbb = np.einsum("eji,ejk->eik", b, ib)
            ie = np.einsum("eij,ej->ei", info, e)
            ga = np.einsum("eji,ej->ei", a, ie)
            gb = np.einsum("eji,ej->ei", b, ie)
            blocks, r, c = [], [], []
            for h, p, q in ((haa, i, i), (hab, i, j), (hab.transpose(0, 2, 1), j, i), (hbb, j, j)):
                blocks.append(h.reshape(-1))
                r.append(((3 * p)[:, None, None] + rows3[None, :, None] + np.zeros((1, 1, 3), dtype=int)).reshape(-1))
                c.append(((3 * q)[:, None, None] + np.zeros((1, 3, 1), dtype=int) + rows3[None, None, :]).reshape(-1))
            # the fixed node: a stiff prior keeps it in place (and the gauge of the whole graph fixed)
            blocks.append(np.full(3, 1e12))
            r.append(3 * fixed + rows3)
            c.append(3 * fixed + rows3)
            size = 3 * n_nodes
            hmat = coo_matrix((np.concatenate(blocks), (np.concatenate(r), np.concatenate(c))),
                              shape=(size, size)).tocsc()
            g = np.zeros(size)
            np.add.at(g, (3 * i[:, None] + rows3[None, :]).reshape(-1), ga.reshape(-1))
            np.add.at(g, (3 * j[:, None] + rows3[None, :]).reshape(-1), gb.reshape(-1))
            # nodes no edge touches keep their place
            touched = np.zeros(n_nodes, dtype=bool)
            touched[i] = True
            touched[j] = True
            idle = np.flatnonzero(~touched)
            if idle.size:
                extra = (3 * idle[:, None] + rows3[None, :]).reshape(-1)
                hmat = hmat + coo_matrix((np.ones(extra.size), (extra, extra)), shape=(size, size)).tocsc()
            step = np.asarray(spsolve(hmat, -g)).reshape(n_nodes, 3)
            x += step
            x[:, 2] = _wrap(x[:, 2])
            if np.abs(step).max() < tolerance:
                break
        return x
