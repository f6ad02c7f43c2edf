/* SPDX-License-Identifier: Apache-2.0 */
#include "explain_svg.h"

#include <math.h>
#include <string.h>

#define CELL_W    24
#define CELL_H    20
#define LEFT      70
#define TOP       50
#define PANEL_GAP 70
#define LEGEND_W  210

void explain_svg_colour(int cand, char out[8])
{
    /* Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT */
    static const double hue[NCCL_NUM_ALGORITHMS] = {210, 120, 0, 30, 280, 35, 350};
    static const double sat[NCCL_NUM_ALGORITHMS] = {0.70, 0.55, 0.0, 0.35, 0.55, 0.90, 0.70};
    static const double light[NCCL_NUM_PROTOCOLS] = {0.80, 0.60, 0.38};
    double h, s, l, c, x, m, r = 0, g = 0, b = 0;

    if (cand < 0) {
        snprintf(out, 8, "#ffffff");
        return;
    }
    h = hue[cand / NCCL_NUM_PROTOCOLS] / 60.0;
    s = sat[cand / NCCL_NUM_PROTOCOLS];
    l = light[cand % NCCL_NUM_PROTOCOLS];
    c = (1.0 - fabs(2.0 * l - 1.0)) * s;
    x = c * (1.0 - fabs(fmod(h, 2.0) - 1.0));
    m = l - c / 2.0;
    switch ((int)h % 6) {
    case 0:
        r = c, g = x;
        break;
    case 1:
        r = x, g = c;
        break;
    case 2:
        g = c, b = x;
        break;
    case 3:
        g = x, b = c;
        break;
    case 4:
        r = x, b = c;
        break;
    default:
        r = c, b = x;
        break;
    }
    snprintf(out, 8, "#%02x%02x%02x", (int)lround((r + m) * 255), (int)lround((g + m) * 255),
             (int)lround((b + m) * 255));
}

static void size_label(char *buf, size_t len, int l)
{
    static const char *const units[] = {"B", "K", "M", "G", "T"};
    snprintf(buf, len, "%d%s", 1 << (l % 10), units[l / 10 < 5 ? l / 10 : 4]);
}

static void panel(FILE *f, const struct explain_svg_map *m, int p, int y0)
{
    int ncols = m->max_log2 - m->min_log2 + 1;
    char col[8], lab[16];

    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">%s</text>\n", LEFT,
            y0 - 8, rail_coll_name(m->colls[p]));
    for (int r = 0; r < m->nrows; r++) {
        /* Most nodes on top. */
        int y = y0 + (m->nrows - 1 - r) * CELL_H;
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%d</text>\n",
                LEFT - 6, y + CELL_H - 6, m->nnodes[r]);
        for (int i = 0; i < ncols; i++) {
            int x = LEFT + i * CELL_W, ch = m->choice[p][r][i];
            int fr = m->from[p][r][i] & ~EXPLAIN_SVG_FROM_JOB;
            bool job = (m->from[p][r][i] & EXPLAIN_SVG_FROM_JOB) != 0;
            explain_svg_colour(ch, col);
            fprintf(f,
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                    "stroke=\"#ffffff\" stroke-width=\"1\"><title>%d nodes, 2^%d B: %s/%s "
                    "(%s%s)</title></rect>\n",
                    x, y, CELL_W, CELL_H, col, m->nnodes[r], m->min_log2 + i,
                    ch >= 0 ? rail_algo_name(ch / NCCL_NUM_PROTOCOLS) : "NCCL",
                    ch >= 0 ? rail_proto_name(ch % NCCL_NUM_PROTOCOLS) : "default",
                    rail_decision_from_name((enum rail_decision_from)fr),
                    job ? ", job measurements" : "");
            if (fr == RAIL_FROM_CALIBRATION && job)
                fprintf(f,
                        "<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"none\" stroke=\"#000000\" "
                        "stroke-width=\"1.5\"/>\n",
                        x + CELL_W / 2, y + CELL_H / 2);
            else if (fr == RAIL_FROM_CALIBRATION)
                fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"#000000\"/>\n",
                        x + CELL_W / 2, y + CELL_H / 2);
            else if (fr == RAIL_FROM_RULES)
                fprintf(f,
                        "<rect x=\"%d\" y=\"%d\" width=\"7\" height=\"7\" fill=\"none\" "
                        "stroke=\"#000000\" stroke-width=\"1.5\"/>\n",
                        x + CELL_W / 2 - 3, y + CELL_H / 2 - 3);
        }
    }
    for (int i = 0; i < ncols; i += 2) {
        int x = LEFT + i * CELL_W + CELL_W / 2, y = y0 + m->nrows * CELL_H + 14;
        size_label(lab, sizeof(lab), m->min_log2 + i);
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%s</text>\n", x,
                y, lab);
    }
    fprintf(f,
            "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">message size "
            "(bytes, log scale)</text>\n",
            LEFT + ncols * CELL_W / 2, y0 + m->nrows * CELL_H + 32);
    fprintf(f,
            "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 %d %d)\">nodes</text>\n",
            18, y0 + m->nrows * CELL_H / 2, 18, y0 + m->nrows * CELL_H / 2);
}

int explain_svg_write(FILE *f, const struct explain_svg_map *m)
{
    int ncols = m->max_log2 - m->min_log2 + 1, used[RAIL_DT_CANDIDATES + 1] = {0};
    int panel_h = m->nrows * CELL_H + PANEL_GAP;
    int width = LEFT + ncols * CELL_W + 20 + LEGEND_W, height = TOP + m->ncolls * panel_h + 10;
    int ly = TOP, lx = LEFT + ncols * CELL_W + 20, legend_h = 0;
    char col[8];

    for (int p = 0; p < m->ncolls; p++)
        for (int r = 0; r < m->nrows; r++)
            for (int i = 0; i < ncols; i++)
                used[m->choice[p][r][i] + 1] = 1;
    for (int c = 0; c <= RAIL_DT_CANDIDATES; c++)
        legend_h += used[c] ? 20 : 0;
    if (height < TOP + legend_h + 90)
        height = TOP + legend_h + 90;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
            "<text x=\"%d\" y=\"22\" font-size=\"15\">",
            width, height, width, height, LEFT);
    for (const char *s = m->title; s && *s; s++) /* escape for XML text */
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else
            fputc(*s, f);
    fputs("</text>\n", f);
    for (int p = 0; p < m->ncolls; p++)
        panel(f, m, p, TOP + 14 + p * panel_h);
    fprintf(f,
            "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">chosen "
            "algorithm/protocol</text>\n",
            lx, ly);
    ly += 10;
    for (int c = -1; c < RAIL_DT_CANDIDATES; c++) {
        if (!used[c + 1])
            continue;
        explain_svg_colour(c, col);
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"16\" height=\"14\" fill=\"%s\" "
                "stroke=\"#888888\"/>\n<text x=\"%d\" y=\"%d\" font-size=\"12\">%s%s%s</text>\n",
                lx, ly, col, lx + 22, ly + 11,
                c >= 0 ? rail_algo_name(c / NCCL_NUM_PROTOCOLS) : "NCCL's own choice",
                c >= 0 ? "/" : "", c >= 0 ? rail_proto_name(c % NCCL_NUM_PROTOCOLS) : "");
        ly += 20;
    }
    ly += 10;
    fprintf(f,
            "<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"#000000\"/><text x=\"%d\" y=\"%d\" "
            "font-size=\"12\">from the calibration</text>\n",
            lx + 8, ly + 7, lx + 22, ly + 11);
    ly += 20;
    fprintf(f,
            "<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"none\" stroke=\"#000000\" "
            "stroke-width=\"1.5\"/><text x=\"%d\" y=\"%d\" font-size=\"12\">from the "
            "calibration, job measurements</text>\n",
            lx + 8, ly + 7, lx + 22, ly + 11);
    ly += 20;
    fprintf(f,
            "<rect x=\"%d\" y=\"%d\" width=\"7\" height=\"7\" fill=\"none\" stroke=\"#000000\" "
            "stroke-width=\"1.5\"/><text x=\"%d\" y=\"%d\" font-size=\"12\">from the rules "
            "file</text>\n",
            lx + 5, ly + 4, lx + 22, ly + 11);
    ly += 20;
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"12\">unmarked: the cost model</text>\n",
            lx + 22, ly + 11);
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}
