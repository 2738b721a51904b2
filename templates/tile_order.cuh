// The order in which a grid walks the tiles of C, shared by the GEMM templates.
#pragma once

// Tile t of a tiles_m x tiles_n grid of tiles, walked `group` rows of tiles at
// a time and down each column of the group before moving right, so the blocks
// that run together need the same few rows of A and columns of B and find them
// in L2. Writes the tile's row and column (in tiles). The arithmetic is
// unsigned: a division by a value the whole block shares then runs on the
// uniform datapath, without a signed division's corrections.
__device__ __forceinline__ void grouped_tile(unsigned t, unsigned tiles_m, unsigned tiles_n,
                                             unsigned group, int &row, int &col)
{
    unsigned per_group = group * tiles_n;
    unsigned first = t / per_group * group;
    unsigned rows = min(tiles_m - first, group);
    unsigned in_group = t % per_group;
    row = (int)(first + in_group % rows);
    col = (int)(in_group / rows);
}

// The same walk along N (RASTER 1: `group` columns of tiles at a time, along
// each row of the group) or along M (RASTER 0, as grouped_tile).
template <int RASTER>
__device__ __forceinline__ void rastered_tile(unsigned t, unsigned tiles_m, unsigned tiles_n,
                                              unsigned group, int &row, int &col)
{
    if (RASTER)
        grouped_tile(t, tiles_n, tiles_m, group, col, row);
    else
        grouped_tile(t, tiles_m, tiles_n, group, row, col);
}
