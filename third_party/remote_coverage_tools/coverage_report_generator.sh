#!/bin/sh
echo "coverage reports are not supported in the offline build" >&2
exit 1
