// common.glsl: indexing helpers shared by the shaders.

// linear_id is the flat index of this invocation in a dispatch laid out by
// ops.go's groups1D: x-major over gl_NumWorkGroups.x groups per row.
uint linear_id(uint local) {
    return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * local + gl_LocalInvocationID.x;
}

// linear_group is the flat index of this workgroup in such a dispatch.
uint linear_group() {
    return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}
