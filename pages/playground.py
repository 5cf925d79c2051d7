import streamlit as st

st.title("Playground")
st.info("This page is being built.")
