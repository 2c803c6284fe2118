#!/bin/sh
exec '{TOOL}' "$@"
