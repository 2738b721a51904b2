// The order in which a grid walks the tiles of C, shared by the GEMM templates.
#pragma once

// Tile t of a tiles_m x tiles_n grid of tiles, walked `group` rows of tiles at
// a time and down each column of the group before moving right, so the blocks
// that run together need the same few rows of A and columns of B and find them
// in L2. Writes the tile's row and column (in tiles).
__device__ __forceinline__ void grouped_tile(int t, int tiles_m, int tiles_n, int group, int &row,
                                             int &col)
{
    int per_group = group * tiles_n;
    int first = t / per_group * group;
    int rows = min(tiles_m - first, group);
    int in_group = t % per_group;
    row = first + in_group % rows;
    col = in_group / rows;
}

// The same walk along N (RASTER 1: `group` columns of tiles at a time, along
// each row of the group) or along M (RASTER 0, as grouped_tile).
template <int RASTER>
__device__ __forceinline__ void rastered_tile(int t, int tiles_m, int tiles_n, int group, int &row,
                                              int &col)
{
    if (RASTER)
        grouped_tile(t, tiles_n, tiles_m, group, col, row);
    else
        grouped_tile(t, tiles_m, tiles_n, group, row, col);
}
