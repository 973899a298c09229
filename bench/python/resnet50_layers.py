"""The ResNet-50 layers the Python benchmarks measure: samples/conv/resnet50_layers.txt's lines, by
id (a 3x3 and a 1x1 of each stage, and a strided 3x3)."""
import os

RESNET_LAYERS = (3, 4, 7, 11, 16, 17, 23)
RESNET_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples", "conv",
                           "resnet50_layers.txt")


def resnet_layers(ids=RESNET_LAYERS):
    """(name, H, W, C, K, R, S, stride, pad) of the listed layers."""
    with open(RESNET_FILE) as layers:
        for line in layers:
            fields = line.split("#")[0].split("|")[0].split()
            if fields and int(fields[0]) in ids:
                yield (fields[1], *(int(v) for v in fields[2:10]))
