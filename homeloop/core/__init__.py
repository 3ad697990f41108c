"""The ground floor: plans, geometry, the home file, the catalog, the checks of a home,
navigation, the house, and the small utilities every floor above uses (ids, io, errors,
folder locks, progress bars). It imports nothing of HomeLoop above it."""
